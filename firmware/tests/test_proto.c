/*
 * test_proto.c - the box side of the wire protocol (firmware/padbox/proto.c)
 * against the shared vectors, firmware/test-vectors/protocol.txt.
 *
 * Usage: test_proto <protocol.txt>
 *
 *  - ok lines (box->host) without escapes are canonical: rebuild each one
 *    byte for byte from its decoded fields with the box's encoder.
 *  - cmd lines (host->box): fed byte by byte through the box's line
 *    assembler and parser, the decoded command must match, and the OK echo
 *    must be the command body itself (canonical).
 *  - cmdbad lines: the box's reply body must match exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../padbox/proto.h"

static int failures = 0;
static int checked = 0;

#define CHECK(cond, ...)                                \
    do {                                                \
        checked++;                                      \
        if (!(cond)) {                                  \
            failures++;                                 \
            printf("FAIL line %d: ", lineno);           \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
        }                                               \
    } while (0)

static int lineno = 0;

/* Undo the vectors' escapes (\xHH, \\) into raw bytes. */
static int unescape(const char *in, char *out, int cap) {
    int n = 0;
    for (const char *p = in; *p && n < cap; p++) {
        if (p[0] == '\\' && p[1] == '\\') {
            out[n++] = '\\';
            p++;
        } else if (p[0] == '\\' && p[1] == 'x') {
            char hex[3] = {p[2], p[3], 0};
            out[n++] = (char)strtol(hex, NULL, 16);
            p += 3;
        } else {
            out[n++] = *p;
        }
    }
    return n;
}

/* Value of key=... in a decoded string, into buf. */
static int field(const char *decoded, const char *key, char *buf, int cap) {
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(decoded, pat);
    if (!p) return 0;
    p += strlen(pat);
    int n = 0;
    while (*p && *p != ' ' && n < cap - 1) buf[n++] = *p++;
    buf[n] = 0;
    return 1;
}

/* An LVL field's values, for proto_add_hex3_of() to read one by one. */
static uint16_t lvl_vals[8];
static uint16_t lvl_val(uint8_t i) { return lvl_vals[i]; }

/* Rebuild a box->host line from its decoded form with the box's encoder. */
static void rebuild(const char *decoded, proto_line_t *l) {
    char type[16], v[80];
    sscanf(decoded, "%15s", type);
    field(decoded, "seq", v, sizeof v);
    proto_begin(l, (uint16_t)strtoul(v, NULL, 10), type);
    static const char *const KEYS[][8] = {
        {"HELLO", "proto", "fw", "pads", "res", "mode", "t", NULL},
        {"HIT", "t", "pad", "kind", "peak", NULL},
        {"HB", "t", NULL},
        {"LVL", "t", NULL},
        {"CFG", "pad", "slap", "touch", "scan", "mask", "xtalk", "xwin"},
        {"ERR", "code", "cmd", NULL},
    };
    for (unsigned k = 0; k < sizeof KEYS / sizeof KEYS[0]; k++) {
        if (strcmp(KEYS[k][0], type) != 0) continue;
        for (int j = 1; j < 8 && KEYS[k][j]; j++) {
            field(decoded, KEYS[k][j], v, sizeof v);
            char *end;
            unsigned long num = strtoul(v, &end, 10);
            if (*v && !*end && strcmp(KEYS[k][j], "fw") != 0) proto_add_u32(l, (uint32_t)num);
            else proto_add_str(l, v);
        }
    }
    if (strcmp(type, "LVL") == 0) {
        /* levels and peaks as values, through the hex encoder: the levels
         * as the box sends them, worked out one by one (proto_add_hex3_of),
         * the peaks from an array */
        const char *names[2] = {"levels", "peaks"};
        for (int j = 0; j < 2; j++) {
            field(decoded, names[j], v, sizeof v);
            int n = (int)strlen(v) / 3;
            for (int i = 0; i < n && i < 8; i++) {
                char h[4] = {v[3 * i], v[3 * i + 1], v[3 * i + 2], 0};
                lvl_vals[i] = (uint16_t)strtoul(h, NULL, 16);
            }
            if (j == 0) proto_add_hex3_of(l, lvl_val, (uint8_t)n);
            else proto_add_hex3(l, lvl_vals, (uint8_t)n);
        }
    }
    if (strcmp(type, "OK") == 0) {
        field(decoded, "cmd", v, sizeof v);
        for (char *p = v; *p; p++)
            if (*p == '_') *p = ' ';
        proto_add_str(l, v);
    }
    proto_finish(l);
}

/* What the box answers to a received line: the reply body without seq. */
static void reply_to(const char *raw, int len, int npads, char *reply, int cap, proto_cmd_t *cmd) {
    proto_rx_t rx;
    memset(&rx, 0, sizeof rx);
    reply[0] = 0;
    memset(cmd, 0, sizeof *cmd);
    for (int i = 0; i <= len; i++) {
        uint8_t r = proto_rx_feed(&rx, i < len ? (uint8_t)raw[i] : (uint8_t)'\n');
        if (r == PROTO_RX_LONG) {
            snprintf(reply, cap, "ERR LONG -");
        } else if (r == PROTO_RX_LINE) {
            uint8_t err = proto_parse_command(rx.buf, rx.len, (uint8_t)npads, cmd);
            if (err == PROTO_OK) {
                proto_line_t l;
                proto_begin_raw(&l, "OK");
                proto_add_cmd_echo(&l, cmd);
                l.buf[l.len] = 0;
                snprintf(reply, cap, "%s", l.buf);
            } else {
                const char *word = err <= PROTO_ERR_UNKNOWN ? "-" : proto_cmd_name(cmd->kind);
                snprintf(reply, cap, "ERR %s %s", proto_err_name(err), word);
            }
        }
    }
}

static void decode_cmd(const proto_cmd_t *cmd, char *out, int cap) {
    if (cmd->kind == PROTO_CMD_SET)
        snprintf(out, cap, "SET pad=%u param=%s value=%lu", cmd->pad, proto_param_name(cmd->param),
                 (unsigned long)cmd->value);
    else if (cmd->kind == PROTO_CMD_STREAM)
        snprintf(out, cap, "STREAM on=%lu", (unsigned long)cmd->value);
    else
        snprintf(out, cap, "%s", proto_cmd_name(cmd->kind));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s protocol.txt\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", argv[1]);
        return 2;
    }
    /* The CRC check value from PROTOCOL.md. */
    CHECK(proto_crc("123456789", 9) == 0x31C3, "crc(123456789) = %04X, want 31C3", proto_crc("123456789", 9));

    char text[512];
    int npads = 8;
    while (fgets(text, sizeof text, f)) {
        lineno++;
        text[strcspn(text, "\n")] = 0;
        if (!text[0] || text[0] == '#') continue;
        char *kind = strtok(text, "\t");
        char *line = strtok(NULL, "\t");
        char *want = strtok(NULL, "\t");
        if (strcmp(kind, "pads") == 0) {
            npads = atoi(line);
            continue;
        }
        if (!line || !want) continue;
        char raw[300];
        int len = unescape(line, raw, sizeof raw);
        if (strcmp(kind, "ok") == 0) {
            if (strchr(line, '\\')) continue; /* not canonical: only the host reads it */
            proto_line_t l;
            rebuild(want, &l);
            CHECK(l.len == len + 1 && memcmp(l.buf, raw, len) == 0 && l.buf[len] == '\n',
                  "encoder built '%.*s', vector is '%s'", l.len ? l.len - 1 : 0, l.buf, line);
        } else if (strcmp(kind, "cmd") == 0) {
            char reply[100], decoded[100];
            proto_cmd_t cmd;
            reply_to(raw, len, npads, reply, sizeof reply, &cmd);
            decode_cmd(&cmd, decoded, sizeof decoded);
            CHECK(strcmp(decoded, want) == 0, "'%s' decoded as '%s', want '%s'", line, decoded, want);
            /* The echo is the canonical body: the line up to its '*'. */
            char body[100];
            snprintf(body, sizeof body, "OK %.*s", (int)(strchr(raw, '*') - raw), raw);
            CHECK(strcmp(reply, body) == 0, "'%s' answered '%s', want '%s'", line, reply, body);
        } else if (strcmp(kind, "cmdbad") == 0) {
            char reply[100];
            proto_cmd_t cmd;
            reply_to(raw, len, npads, reply, sizeof reply, &cmd);
            CHECK(strcmp(reply, want) == 0, "'%s' answered '%s', want '%s'", line, reply, want);
        }
    }
    fclose(f);

    /* Encoder limits: an over-long body is never sent half-built. */
    proto_line_t l;
    proto_begin(&l, 65535, "HIT");
    for (int i = 0; i < 20; i++) proto_add_u32(&l, 4294967295u);
    CHECK(proto_finish(&l) == 0, "a body over 74 bytes is refused by the encoder");

    printf("%d protocol checks, %d failure(s)\n", checked, failures);
    return failures ? 1 : 0;
}
