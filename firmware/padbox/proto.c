/*
 * proto.c - the box side of the wire protocol; see proto.h and PROTOCOL.md.
 */
#include "proto.h"


#include <string.h>

#ifdef __AVR__
#include <avr/pgmspace.h>
#include <util/crc16.h>
/* Constant tables live in flash: the ATmega328P has 2 KB of RAM in all. */
#define ROM PROGMEM
#define ROM_U32(p) pgm_read_dword(p)
#define ROM_U8(p) pgm_read_byte(p)
#else
#define ROM
#define ROM_U32(p) (*(p))
#define ROM_U8(p) (*(p))
#endif

static inline uint16_t crc_update(uint16_t crc, uint8_t byte) {
#ifdef __AVR__
    return _crc_xmodem_update(crc, byte);
#else
    /* The same arithmetic as avr-libc's documented C equivalent. */
    crc ^= (uint16_t)byte << 8;
    for (uint8_t b = 0; b < 8; b++) crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    return crc;
#endif
}

uint16_t proto_crc(const char *data, uint8_t len) {
    uint16_t crc = 0;
    for (uint8_t i = 0; i < len; i++) crc = crc_update(crc, (uint8_t)data[i]);
    return crc;
}

static const char HEX[] ROM = "0123456789ABCDEF";

static void put(proto_line_t *l, char c) {
    /* Keep room for "*CCCC\n": the body may use PROTO_MAX_BODY bytes. */
    if (l->len >= PROTO_MAX_BODY) {
        l->overflow = 1;
        return;
    }
    l->buf[l->len++] = c;
    l->crc = crc_update(l->crc, (uint8_t)c);
}

void proto_begin_raw(proto_line_t *l, const char *word) {
    l->len = 0;
    l->overflow = 0;
    l->crc = 0;
    while (*word) put(l, *word++);
}

/* Decimal by subtracting powers of ten: an 8-bit AVR has no divider, and
 * ten 32-bit divisions would cost a whole scan. The digits from 10^9 to
 * 10^4 take 32-bit subtractions; what is left is below 10^4 and takes
 * 16-bit ones, the tens 8-bit ones, and the units are what remains. */
static const uint32_t POW10[] ROM = {1000000000ul, 100000000ul, 10000000ul, 1000000ul, 100000ul, 10000ul};

/* The digit of v at power p, subtracted from v (v < 10 * p). */
static inline char digit16(uint16_t *v, uint16_t p) {
    char digit = '0';
    while (*v >= p) {
        *v -= p;
        digit++;
    }
    return digit;
}

/* The digits of v from 10^9 down to 10^4 (none if v < 10^4); returns the
 * rest (< 10^4), with PROTO_U32_STARTED set if a digit was written. */
static uint16_t put_u32_top(proto_line_t *l, uint32_t v) {
    if (v < 10000u) return (uint16_t)v;
    uint8_t i = 0;
    while (v < ROM_U32(&POW10[i])) i++; /* v >= 10^4 = POW10[5]: ends */
    for (; i < 6; i++) {
        char digit = '0';
        uint32_t p = ROM_U32(&POW10[i]);
        while (v >= p) {
            v -= p;
            digit++;
        }
        put(l, digit);
    }
    return (uint16_t)((uint16_t)v | PROTO_U32_STARTED);
}

/* The last four digits, from what put_u32_top left. */
static void put_u32_rest(proto_line_t *l, uint16_t part) {
    uint8_t started = (part & PROTO_U32_STARTED) != 0; /* no leading zeros */
    uint16_t w = (uint16_t)(part & ~PROTO_U32_STARTED); /* < 10000 */
    char d = digit16(&w, 1000u);
    if (started || d != '0') {
        put(l, d);
        started = 1;
    }
    d = digit16(&w, 100u);
    if (started || d != '0') {
        put(l, d);
        started = 1;
    }
    uint8_t b = (uint8_t)w; /* < 100 */
    d = '0';
    while (b >= 10u) {
        b -= 10u;
        d++;
    }
    if (started || d != '0') put(l, d);
    put(l, (char)('0' + b));
}

static void put_u32(proto_line_t *l, uint32_t v) { put_u32_rest(l, put_u32_top(l, v)); }

uint16_t proto_add_u32_top(proto_line_t *l, uint32_t v) {
    put(l, ' ');
    return put_u32_top(l, v);
}

void proto_add_u32_rest(proto_line_t *l, uint16_t part) { put_u32_rest(l, part); }

void proto_begin(proto_line_t *l, uint16_t seq, const char *rom_type) {
    l->len = 0;
    l->overflow = 0;
    l->crc = 0;
    put_u32(l, seq);
    proto_add_rom_str(l, rom_type);
}

void proto_add_str(proto_line_t *l, const char *s) {
    put(l, ' ');
    while (*s) put(l, *s++);
}

void proto_add_u32(proto_line_t *l, uint32_t v) {
    put(l, ' ');
    put_u32(l, v);
}

/* One value as 3 hex digits (at most 0x3FF). */
static void put_hex3(proto_line_t *l, uint16_t x) {
    if (x > 0x3FFu) x = 0x3FFu;
    put(l, (char)ROM_U8(&HEX[(x >> 8) & 0xF]));
    put(l, (char)ROM_U8(&HEX[(x >> 4) & 0xF]));
    put(l, (char)ROM_U8(&HEX[x & 0xF]));
}

void proto_add_hex3(proto_line_t *l, const uint16_t *v, uint8_t n) {
    put(l, ' ');
    for (uint8_t i = 0; i < n; i++) put_hex3(l, v[i]);
}

void proto_add_hex3_of(proto_line_t *l, uint16_t (*value)(uint8_t), uint8_t n) {
    put(l, ' ');
    for (uint8_t i = 0; i < n; i++) put_hex3(l, value(i));
}

uint8_t proto_finish(proto_line_t *l) {
    if (l->overflow) return 0;
    uint16_t crc = l->crc;
    l->buf[l->len++] = '*';
    l->buf[l->len++] = (char)ROM_U8(&HEX[(crc >> 12) & 0xF]);
    l->buf[l->len++] = (char)ROM_U8(&HEX[(crc >> 8) & 0xF]);
    l->buf[l->len++] = (char)ROM_U8(&HEX[(crc >> 4) & 0xF]);
    l->buf[l->len++] = (char)ROM_U8(&HEX[crc & 0xF]);
    l->buf[l->len++] = '\n';
    l->buf[l->len] = 0;
    return l->len;
}

/* The names as fixed-width strings in flash on the AVR (in RAM they cost
 * the box ~180 of its 2,048 bytes): read them with proto_add_rom_str(). */
static const char CMD_NAMES[][9] ROM = {"-", "HELLO", "CFG", "SET", "SAVE", "STREAM", "DEFAULTS"};
static const char PARAM_NAMES[][6] ROM = {"slap", "touch", "scan", "mask", "xtalk", "xwin"};
static const char ERR_NAMES[][8] ROM = {"OK", "LONG", "FRAME", "CRC", "UNKNOWN", "ARGS", "PAD", "PARAM", "RANGE", "EEPROM"};
static const uint32_t PARAM_LO[] ROM = {1, 0, 0, 0, 0, 0};
static const uint32_t PARAM_HI[] ROM = {1023, 1023, 20000, 1000000ul, 100, 100000ul};

const char *proto_cmd_name(uint8_t kind) { return CMD_NAMES[kind <= PROTO_CMD_DEFAULTS ? kind : PROTO_CMD_NONE]; }
const char *proto_param_name(uint8_t param) { return param < PROTO_PARAM_COUNT ? PARAM_NAMES[param] : CMD_NAMES[0]; }
const char *proto_err_name(uint8_t err) { return err <= PROTO_ERR_EEPROM ? ERR_NAMES[err] : CMD_NAMES[0]; }

void proto_add_rom_str(proto_line_t *l, const char *rom) {
    put(l, ' ');
    for (char c; (c = (char)ROM_U8(rom)) != 0; rom++) put(l, c);
}

RARELY_RUN void proto_param_range(uint8_t param, uint32_t *lo, uint32_t *hi) {
    if (param >= PROTO_PARAM_COUNT) param = 0;
    *lo = ROM_U32(&PARAM_LO[param]);
    *hi = ROM_U32(&PARAM_HI[param]);
}

/* Token i of a body split on single spaces (empty tokens count). */
typedef struct {
    const char *p;
    uint8_t n;
} token_t;

#define MAX_TOKENS 6

RARELY_RUN static uint8_t split(const char *body, uint8_t len, token_t *tok) {
    uint8_t count = 0;
    uint8_t start = 0;
    for (uint8_t i = 0; i <= len; i++) {
        if (i == len || body[i] == ' ') {
            if (count < MAX_TOKENS) {
                tok[count].p = body + start;
                tok[count].n = (uint8_t)(i - start);
            }
            count++;
            start = (uint8_t)(i + 1);
        }
    }
    return count; /* may exceed MAX_TOKENS: then only the count is meaningful */
}

/* The token is the name (a string in ROM). */
RARELY_RUN static uint8_t tok_is(const token_t *t, const char *rom) {
    uint8_t n = 0;
    for (char c; (c = (char)ROM_U8(rom + n)) != 0; n++)
        if (n >= t->n || t->p[n] != c) return 0;
    return n == t->n;
}

enum { NUM_BAD = 0, NUM_OK, NUM_HUGE };

/* A canonical unsigned decimal: "0" or a non-zero digit then digits. */
RARELY_RUN static uint8_t number(const token_t *t, uint32_t *out) {
    if (t->n == 0) return NUM_BAD;
    if (t->p[0] == '0' && t->n > 1) return NUM_BAD;
    uint32_t v = 0;
    uint8_t huge = 0;
    for (uint8_t i = 0; i < t->n; i++) {
        char c = t->p[i];
        if (c < '0' || c > '9') return NUM_BAD;
        uint8_t digit = (uint8_t)(c - '0');
        if (v > 429496729ul || (v == 429496729ul && digit > 5)) huge = 1;
        if (!huge) v = v * 10u + digit;
    }
    *out = v;
    return huge ? NUM_HUGE : NUM_OK;
}

static uint8_t is_upper_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

static uint8_t hex_value(char c) { return (uint8_t)(c <= '9' ? c - '0' : c - 'A' + 10); }

RARELY_RUN uint8_t proto_parse_command(const char *line, uint8_t len, uint8_t npads, proto_cmd_t *cmd) {
    memset(cmd, 0, sizeof *cmd);
    if (len > 0 && line[len - 1] == '\r') len--;
    if (len + 1u > PROTO_MAX_LINE) return PROTO_ERR_LONG;
    for (uint8_t i = 0; i < len; i++)
        if ((uint8_t)line[i] < 0x20 || (uint8_t)line[i] > 0x7E) return PROTO_ERR_FRAME;
    const char *star = memchr(line, '*', len);
    if (!star) return PROTO_ERR_FRAME;
    uint8_t body_len = (uint8_t)(star - line);
    if (len - body_len != 5) return PROTO_ERR_FRAME;
    uint16_t want = 0;
    for (uint8_t i = 1; i <= 4; i++) {
        if (!is_upper_hex(star[i])) return PROTO_ERR_FRAME;
        want = (uint16_t)((want << 4) | hex_value(star[i]));
    }
    if (proto_crc(line, body_len) != want) return PROTO_ERR_CRC;

    token_t tok[MAX_TOKENS];
    uint8_t ntok = split(line, body_len, tok);
    for (uint8_t k = PROTO_CMD_HELLO; k <= PROTO_CMD_DEFAULTS; k++)
        if (tok_is(&tok[0], CMD_NAMES[k])) cmd->kind = k;
    if (cmd->kind == PROTO_CMD_NONE) return PROTO_ERR_UNKNOWN;

    uint32_t v;
    switch (cmd->kind) {
    case PROTO_CMD_SET: {
        if (ntok != 4) return PROTO_ERR_ARGS;
        uint32_t pad = 0;
        uint8_t pad_ok = number(&tok[1], &pad);
        uint8_t val_ok = number(&tok[3], &v);
        if (pad_ok == NUM_BAD || val_ok == NUM_BAD) return PROTO_ERR_ARGS;
        if (pad_ok == NUM_HUGE || pad < 1 || pad > npads) return PROTO_ERR_PAD;
        cmd->pad = (uint8_t)pad;
        uint8_t param = PROTO_PARAM_COUNT;
        for (uint8_t p = 0; p < PROTO_PARAM_COUNT; p++)
            if (tok_is(&tok[2], PARAM_NAMES[p])) param = p;
        if (param == PROTO_PARAM_COUNT) return PROTO_ERR_PARAM;
        cmd->param = param;
        if (val_ok == NUM_HUGE || v < ROM_U32(&PARAM_LO[param]) || v > ROM_U32(&PARAM_HI[param])) return PROTO_ERR_RANGE;
        cmd->value = v;
        return PROTO_OK;
    }
    case PROTO_CMD_STREAM: {
        if (ntok != 2) return PROTO_ERR_ARGS;
        uint8_t ok = number(&tok[1], &v);
        if (ok == NUM_BAD) return PROTO_ERR_ARGS;
        if (ok == NUM_HUGE || v > 1) return PROTO_ERR_RANGE;
        cmd->value = v;
        return PROTO_OK;
    }
    default:
        return ntok == 1 ? PROTO_OK : PROTO_ERR_ARGS;
    }
}

RARELY_RUN void proto_add_cmd_echo(proto_line_t *l, const proto_cmd_t *cmd) {
    proto_add_rom_str(l, proto_cmd_name(cmd->kind));
    if (cmd->kind == PROTO_CMD_SET) {
        proto_add_u32(l, cmd->pad);
        proto_add_rom_str(l, proto_param_name(cmd->param));
        proto_add_u32(l, cmd->value);
    } else if (cmd->kind == PROTO_CMD_STREAM) {
        proto_add_u32(l, cmd->value);
    }
}

uint8_t proto_rx_feed(proto_rx_t *rx, uint8_t byte) {
    if (rx->done) {
        rx->done = 0;
        rx->len = 0;
    }
    if (byte == '\n') {
        uint8_t was_long = rx->too_long;
        uint8_t len = rx->len;
        rx->too_long = 0;
        rx->len = 0;
        if (was_long) return PROTO_RX_LONG;
        if (len == 0 || (len == 1 && rx->buf[0] == '\r')) return PROTO_RX_NONE; /* empty line */
        rx->len = len; /* the caller reads buf[0..len); the next byte restarts it */
        rx->done = 1;
        return PROTO_RX_LINE;
    }
    if (rx->too_long) return PROTO_RX_NONE;
    if (rx->len == PROTO_MAX_LINE - 1) {
        /* An 80th byte before the \n: the line would pass 80 bytes. */
        rx->too_long = 1;
        rx->len = 0;
        return PROTO_RX_NONE;
    }
    rx->buf[rx->len++] = (char)byte;
    return PROTO_RX_NONE;
}
