/* NVML, loaded with dlopen so the binary starts on machines without the driver. Only the few
 * calls syncbench uses are declared here (the toolkit ships no nvml.h). */
#ifndef SB_NVML_H
#define SB_NVML_H

#include <stddef.h>

/* 0 if NVML was loaded and initialised. */
int sb_nvml_open(void);
void sb_nvml_close(void);
/* Driver version ("580.159.04"); 0 on success. */
int sb_nvml_driver_version(char *buf, size_t n);

#endif
