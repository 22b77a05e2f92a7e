/*
 * text.h: text that leaves faultline for a human or a shell. Scripts, histories and
 * command lines are untrusted: a scenario's expect message, an error raised by a
 * script or a path given on the command line may hold any byte. Two rules keep them
 * harmless on the way out:
 *
 *  - fl_term_escape: what a terminal shows never carries raw control bytes (an ESC
 *    that clears the screen, a CR that overwrites a line, a C1 control, bytes that are
 *    not UTF-8); they are written as \xNN (bytes) or \u00NN (C1 characters), valid
 *    UTF-8 stays as it is.
 *  - fl_shell_word: a word of a command line that faultline prints for a user to run
 *    (the `replay:` and `shrink:` lines) is quoted for a POSIX shell, so that pasting
 *    it or running it with `sh -c` gives back exactly the same bytes, and it shows no
 *    control byte either (those are produced by printf inside the quoted word).
 *
 * Neither ever truncates. Pure functions: no I/O, no locale.
 */
#ifndef FL_TEXT_H
#define FL_TEXT_H

#include "harness/common/common.h"

enum fl_term_flags {
    FL_TERM_ONE_LINE = 0,      /* escape \n and \t too: the text stays on one line */
    FL_TERM_KEEP_NEWLINES = 1, /* keep \n and \t (multi-line output such as print) */
};

/* Length (1..4) of the valid UTF-8 sequence at p (n > 0 bytes there) and its code
 * point in *cp, or 0 when p does not start one. The strict rules of RFC 3629 (and
 * jansson's): no overlong forms, no surrogates, nothing above U+10FFFF. The one UTF-8
 * decoder of the tree (terminal escaping, history JSON text, reports). */
size_t fl_utf8_seq(const uint8_t *p, size_t n, uint32_t *cp);

/* Appends the n bytes at p to out with every control byte, DEL, C1 character and
 * byte that is not part of valid UTF-8 escaped. */
void fl_term_escape(struct fl_buf *out, const void *p, size_t n, int flags);

/* The NUL-terminated s escaped as fl_term_escape does with FL_TERM_ONE_LINE, in a
 * fresh string the caller frees ("" for NULL). */
char *fl_term_dup(const char *s);

/* Appends s to out as one POSIX shell word: bare when it only holds characters no
 * shell treats specially, else single-quoted; control bytes and bytes that are not
 * valid UTF-8 come from "$(printf '\ooo')" so the printed line shows none of them. A
 * newline stays literal inside the quotes (command substitution would strip it). */
void fl_shell_word(struct fl_buf *out, const char *s);
/* The same word written to f, without allocating (for the assertion handler). */
void fl_shell_word_write(FILE *f, const char *s);

#endif
