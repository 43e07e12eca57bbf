/* The hidden `syncbench __record-schema`: the record table (record/schema.c) as the Markdown
 * table of docs/record-format.md, on stdout (tests/cli/test_docs.py holds the doc to it); with
 * --check FILE..., each line of each record file held to the table as a writer must keep to it
 * (tests/cli/test_record_schema.py): a line `FILE:LINE: why` per fault, exit 1 on any. */
#ifndef SB_RECORD_SCHEMA_CMD_H
#define SB_RECORD_SCHEMA_CMD_H

#define SB_RECORD_SCHEMA_CMD "__record-schema"

int sb_cmd_record_schema(int argc, char **argv);

#endif
