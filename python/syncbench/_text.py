"""Text from outside (a library's path, a Python file's name and source line, an analyzer's
report) as a terminal may show it: the package's one escaper, in the form of syncbench's C
escaper (src/base/utf8.c, sb_escape_piece) and which plot/plotkit.py loads too. C0 controls and DEL
as \\n, \\t, \\r, \\xNN; C1 controls (which terminals obey as CSI and OSC) as \\xc2\\xNN; bytes
that are not UTF-8 (held by Python as U+DC80..U+DCFF, their surrogateescape form) as \\xNN, the
byte itself; other lone surrogates as \\uNNNN; the rest as it is."""


def escape(text):
    text = str(text)
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    return "".join(pieces(text))


def pieces(text):
    """Each character of text as escape() shows it (plot/plotkit.py cuts between them)."""
    out = []
    for ch in str(text):
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
    return out


def workflow_escape(text, prop=False):
    """Text as a GitHub workflow command carries it, in the form of syncbench's C side
    (src/sinks/github.c, sb_gh_escape): `%`, `\\r`, `\\n` as %25, %0D, %0A (GitHub shows them as
    the characters); in a property's value (prop) `:` and `,` as %3A and %2C too; every other
    character as escape() shows it, so that no control character reaches the log raw."""
    codes = {"%": "%25", "\r": "%0D", "\n": "%0A"}
    if prop:
        codes.update({":": "%3A", ",": "%2C"})
    text = str(text)
    return "".join(codes.get(ch) or piece for ch, piece in zip(text, pieces(text)))


def unique_keys(pairs):
    """json's object_pairs_hook: an object with a member name given twice is refused (a
    ValueError, as any JSON that is not well formed), never read as its last value (a report
    with "ranks" twice, the second empty)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"member {escape(k)} given twice")
        out[k] = v
    return out
