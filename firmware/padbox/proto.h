/*
 * proto.h - the pad box side of the wire protocol (firmware/PROTOCOL.md,
 * version 1), in plain C with no I/O: framing and CRC, box line encoding,
 * host command parsing. Shared by the sketch and the host tests, which check
 * it against firmware/test-vectors/protocol.txt.
 */
#ifndef PADBOX_PROTO_H
#define PADBOX_PROTO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* On a function run only for commands, at start-up or while saving: GCC
 * builds it for size, not speed, which leaves the flash to the detection.
 * Never on a sample's or a HIT line's path. */
#define RARELY_RUN __attribute__((cold))

#define PROTO_VERSION 1
#define PROTO_MAX_LINE 80 /* every byte, including the final \n */
#define PROTO_MAX_BODY 74 /* PROTO_MAX_LINE - "*CCCC" - "\n" */

/** CRC-16/XMODEM (poly 0x1021, init 0), as avr-libc's _crc_xmodem_update. */
uint16_t proto_crc(const char *data, uint8_t len);

/** A box->host line being built: "<seq> <TYPE> <fields>*CCCC\n". */
typedef struct {
    char buf[PROTO_MAX_LINE + 1];
    uint8_t len;
    uint8_t overflow; /* a field did not fit: the line must not be sent */
    uint16_t crc;     /* of the body so far: a line can be built in small steps */
} proto_line_t;

/** Begin a line: seq and its type (a string in ROM: flash on the AVR, PSTR()). */
void proto_begin(proto_line_t *l, uint16_t seq, const char *rom_type);
/** Begin a line with no seq (host->box commands, used by the tests). */
void proto_begin_raw(proto_line_t *l, const char *word);
void proto_add_str(proto_line_t *l, const char *s);
void proto_add_u32(proto_line_t *l, uint32_t v);
/** proto_add_u32 in two calls, for lines built a few microseconds at a
 * time: the first adds the space and the digits above the last four and
 * returns what proto_add_u32_rest needs for the rest. */
#define PROTO_U32_STARTED 0x8000u
uint16_t proto_add_u32_top(proto_line_t *l, uint32_t v);
void proto_add_u32_rest(proto_line_t *l, uint16_t part);
/** Append n values as 3 uppercase hex digits each, no separator (LVL). */
void proto_add_hex3(proto_line_t *l, const uint16_t *v, uint8_t n);
/** The same, value(0) .. value(n - 1): values worked out as the line is
 * built, with no array kept for them (LVL's latest levels). */
void proto_add_hex3_of(proto_line_t *l, uint16_t (*value)(uint8_t), uint8_t n);
/** Append "*CCCC\n"; returns the line length, or 0 if it overflowed. */
uint8_t proto_finish(proto_line_t *l);

/* Host commands. */
enum {
    PROTO_CMD_NONE = 0,
    PROTO_CMD_HELLO,
    PROTO_CMD_CFG,
    PROTO_CMD_SET,
    PROTO_CMD_SAVE,
    PROTO_CMD_STREAM,
    PROTO_CMD_DEFAULTS
};
/* SET parameters, in CFG field order. */
enum {
    PROTO_PARAM_SLAP = 0,
    PROTO_PARAM_TOUCH,
    PROTO_PARAM_SCAN,
    PROTO_PARAM_MASK,
    PROTO_PARAM_XTALK,
    PROTO_PARAM_XWIN,
    PROTO_PARAM_COUNT
};
/* Error codes, in the order they are checked. */
enum {
    PROTO_OK = 0,
    PROTO_ERR_LONG,
    PROTO_ERR_FRAME,
    PROTO_ERR_CRC,
    PROTO_ERR_UNKNOWN,
    PROTO_ERR_ARGS,
    PROTO_ERR_PAD,
    PROTO_ERR_PARAM,
    PROTO_ERR_RANGE,
    PROTO_ERR_EEPROM
};

/** A parsed host command. pad is 1-based as on the wire. */
typedef struct {
    uint8_t kind;  /* PROTO_CMD_*; set even when the arguments are refused */
    uint8_t pad;
    uint8_t param; /* PROTO_PARAM_* */
    uint32_t value;
} proto_cmd_t;

/** The names of commands, SET parameters and errors ("-" for none), as
 * strings in ROM: flash on the AVR (read them with proto_add_rom_str()), RAM
 * on the host. */
const char *proto_cmd_name(uint8_t kind);
const char *proto_param_name(uint8_t param);
const char *proto_err_name(uint8_t err);
/** proto_add_str() for a string in ROM (a name above). */
void proto_add_rom_str(proto_line_t *l, const char *rom);
/** Lowest and highest value a SET parameter accepts. */
void proto_param_range(uint8_t param, uint32_t *lo, uint32_t *hi);

/**
 * Parse one received line (without its final \n; a single trailing \r is
 * allowed) for a box with npads pads. Returns PROTO_OK or an error code;
 * cmd->kind names the command when it was a known one (else PROTO_CMD_NONE).
 */
uint8_t proto_parse_command(const char *line, uint8_t len, uint8_t npads, proto_cmd_t *cmd);

/** Append the command as the box understood it, canonically: the fields of
 * an OK reply ("SET 3 slap 250", "STREAM 1", "SAVE"). */
void proto_add_cmd_echo(proto_line_t *l, const proto_cmd_t *cmd);

/** Line assembler for received bytes, with the 80-byte limit. */
typedef struct {
    char buf[PROTO_MAX_LINE];
    uint8_t len;
    uint8_t too_long; /* discarding up to the next \n */
    uint8_t done;     /* buf holds a complete line until the next byte */
} proto_rx_t;

enum { PROTO_RX_NONE = 0, PROTO_RX_LINE, PROTO_RX_LONG };

/** Feed one byte. PROTO_RX_LINE: rx->buf[0..rx->len) is a complete line
 * (without \n; never empty); PROTO_RX_LONG: an over-long line just ended. */
uint8_t proto_rx_feed(proto_rx_t *rx, uint8_t byte);

#ifdef __cplusplus
}
#endif

#endif
