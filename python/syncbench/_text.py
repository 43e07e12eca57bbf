"""Text from outside (a library's path, a Python file's name and source line, an analyzer's
report) as a terminal may show it: the package's one escaper, in the form of syncbench's C
escaper (src/base/utf8.c, sb_escape_piece) and of plot/plotkit.py's escape. C0 controls and DEL
as \\n, \\t, \\r, \\xNN; C1 controls (which terminals obey as CSI and OSC) as \\xc2\\xNN; bytes
that are not UTF-8 (held by Python as U+DC80..U+DCFF, their surrogateescape form) as \\xNN, the
byte itself; other lone surrogates as \\uNNNN; the rest as it is."""


def escape(text):
    text = str(text)
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if 0x20 <= o < 0x7f or (0xa0 <= o and not 0xd800 <= o <= 0xdfff):
            out.append(ch)
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif o < 0x20 or o == 0x7f:
            out.append(f"\\x{o:02x}")
        elif 0x80 <= o <= 0x9f:
            out.append(f"\\xc2\\x{o:02x}")
        elif 0xdc80 <= o <= 0xdcff:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{o - 0xdc00:02x}")
        else:
            out.append(f"\\u{o:04x}")
    return "".join(out)
