/*
 * padbox.ino - the tabletop-companion pad box: up to 8 piezo pads (A0..A7)
 * or 8 button pads (D2..D9) on an ATmega328P at 16 MHz (Arduino Nano),
 * timestamped hits to the host over USB serial (firmware/PROTOCOL.md).
 *
 * Builds two ways, to the same behaviour:
 *   - `make -C firmware` (plain avr-gcc + avr-libc; firmware/avr/main.cpp
 *     calls setup() and loop()), the image the simulator tests run;
 *   - the Arduino IDE (open this folder, board "Arduino Nano"); the core's
 *     Timer0 millis interrupt then also runs, which only adds ~1 % jitter.
 * Only avr-libc is used here, no Arduino API, so both builds agree.
 *
 * Time base: Timer1 counts at 2 MHz (prescaler 8); its overflow interrupt
 * extends it to a 32-bit microsecond clock that wraps every 71.6 minutes.
 * A conversion is stamped with TCNT1 alone; its microseconds come from a
 * reference read off the 32-bit clock every few ms ("Sample times").
 *
 * Sampling: the ADC runs at 1 MHz (prescaler 16, within the 50 kHz..1 MHz
 * the datasheet allows for reduced, still ~9-bit-clean accuracy), 13 us a
 * conversion. The loop starts the next pad's conversion as soon as one
 * ends and runs detection of the finished sample while the ADC works, so
 * a scan of 8 pads takes about 8 conversions plus the per-scan work. The
 * firmware measures its own scan period and reports it as the timing
 * resolution in HELLO.
 *
 * Serial: 250000 baud, UBRR = 3, exact at 16 MHz (see PROTOCOL.md). Output
 * goes through a 128-byte queue, fed to the UART one byte at a time from
 * inside the scan loop (no transmit interrupt, so output never steals a
 * sample slot). Input arrives by the receive interrupt into a small ring.
 *
 * Mode: piezo unless D12 is tied to GND at reset (then button mode).
 */
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <string.h>

#include "detect.h"
#include "proto.h"

#define FW_VERSION "2.0.0"
#ifndef PADBOX_PADS
#define PADBOX_PADS 8
#endif
#define HB_PERIOD_US 500000ul
#define LVL_PERIOD_US 50000ul
#define BOOT_LEARN_SCANS 150u  /* x ~120 us: 18 ms, most of a mains period */
#define BUTTON_RELEASE_US 5000ul  /* a press counts only after 5 ms released */
#define BUTTON_RESOLUTION_US 8u   /* edge interrupt latency bound, worst case */
#define EEPROM_MAGIC0 'P'
#define EEPROM_MAGIC1 'B'
#define EEPROM_LAYOUT 1
#define EEPROM_PAD_BYTES 16
#define EEPROM_SIZE (4 + EEPROM_PAD_BYTES * DETECT_MAX_PADS + 2)

/* ---------------------------------------------------------------- clock */

/* The scan's state, kept in registers by scan_pads(): the stamp of the
 * conversion in flight, and a copy of the reference (see "Sample times").
 * Declared before any function: the Arduino IDE puts its prototypes there. */
typedef struct {
    uint16_t stamp;
    uint16_t ref_tick;
    uint32_t ref_us;
} scan_t;

/* Microseconds at the last Timer1 overflow: one overflow is 65536 ticks of
 * 0.5 us = 32768 us. Kept in us so reading the clock is one 32-bit add. */
static volatile uint32_t t1_base_us;

ISR(TIMER1_OVF_vect) { t1_base_us += 32768u; }

/** Timer1's count now (*lo, ticks) and the microseconds at its last
 * overflow (returned), read together; safe with interrupts on or off. */
static inline uint32_t clock_read(uint16_t *lo) __attribute__((always_inline));
static inline uint32_t clock_read(uint16_t *lo) {
    uint8_t sreg = SREG;
    cli();
    uint16_t ticks = TCNT1;
    uint32_t base = t1_base_us;
    /* An overflow not yet serviced, and the count read after it. */
    if ((TIFR1 & _BV(TOV1)) && ticks < 0x8000u) base += 32768u;
    SREG = sreg;
    *lo = ticks;
    return base;
}

/** Device time in microseconds; safe with interrupts on or off. */
static inline uint32_t clock_us(void) __attribute__((always_inline));
static inline uint32_t clock_us(void) {
    uint16_t lo;
    uint32_t base = clock_read(&lo);
    return base + (lo >> 1);
}

static void clock_init(void) {
    TCCR1A = 0;
    TCCR1B = _BV(CS11); /* clk/8: 0.5 us a tick */
    TCCR1C = 0;
    TCNT1 = 0;
    TIFR1 = _BV(TOV1);
    TIMSK1 = _BV(TOIE1);
}

/* ----------------------------------------------------------------- UART */

#define TXQ_SIZE 128u /* a power of two, above the longest line (LVL, ~70 bytes); HIT/HB come a few bytes a scan */
#define TXQ_MASK (TXQ_SIZE - 1u)
static uint8_t txq[TXQ_SIZE];
static volatile uint8_t rxq[32]; /* a command line is ~20 bytes, drained every scan */
static uint8_t tx_head, tx_tail; /* indices into txq, wrapped with TXQ_MASK */
static volatile uint8_t rx_head;
static uint8_t rx_tail;
static uint16_t seq;
static uint8_t said_hello; /* nothing but HELLO goes out first */

ISR(USART_RX_vect) {
    uint8_t status = UCSR0A;
    uint8_t c = UDR0;
    if (status & (_BV(FE0) | _BV(DOR0))) c = 0x01; /* a damaged byte: the line fails FRAME */
    uint8_t next = (uint8_t)((rx_head + 1) & 31);
    if (next != rx_tail) {
        rxq[rx_head] = c;
        rx_head = next;
    }
}

static void uart_init(void) {
    UBRR0H = 0;
    UBRR0L = 3; /* 16 MHz / (16 * (3 + 1)) = 250000 baud exactly */
    UCSR0A = 0; /* normal speed (a bootloader may have left U2X0 set) */
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00); /* 8N1 */
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);
    /* Start the transmitter with an empty line (hosts ignore it, PROTOCOL.md).
     * It also makes simavr raise UDRE0 however long after reset this runs. */
    UDR0 = '\n';
}

/* Always inline: the Arduino IDE's -Os build would otherwise call it in
 * every turn of the ADC wait loop. */
static inline void tx_service(void) __attribute__((always_inline));
static inline void tx_service(void) {
    if (tx_head != tx_tail && (UCSR0A & _BV(UDRE0))) {
        UDR0 = txq[tx_tail];
        tx_tail = (uint8_t)((tx_tail + 1u) & TXQ_MASK);
    }
}

static uint8_t tx_free(void) { return (uint8_t)((tx_tail - tx_head - 1u) & TXQ_MASK); }

/* ------------------------------------------------------------ detection */

static detect_t det;
static uint8_t npads = PADBOX_PADS;
static uint8_t button_mode;
static uint16_t scan_res_us = 1;   /* measured scan period, rounded up */
static uint16_t lvl_latest[DETECT_MAX_PADS];
static uint16_t lvl_peak[DETECT_MAX_PADS];
static uint8_t streaming;
static uint32_t next_hb, next_lvl;

/* Button presses from the pin-change interrupt to the main loop. */
typedef struct {
    uint8_t pad;
    uint32_t t_us;
} press_t;
static volatile press_t pressq[8];
static volatile uint8_t press_head;
static uint8_t press_tail;
static uint8_t btn_last = 0xFF; /* 1 = released (pull-up) */
static uint32_t btn_press[DETECT_MAX_PADS];

/* What only the piezo scan needs (see "Sample times"; between scan_pads()
 * and the work that moves the reference) ... */
typedef struct {
    uint16_t conv_stamp;  /* TCNT1 when the conversion in flight started */
    uint16_t ref_tick;    /* the reference (scan_pads keeps a copy in registers) */
    uint32_t ref_us;
    detect_hit_t decided; /* a pad's decision, as detect_poll_at() writes it */
    uint8_t scans_left;   /* scan_pads(): scans still to do, 0: forever */
} piezo_ram_t;
/* ... and what only button mode needs share their RAM (2 KB: the stack's
 * headroom is what is left): a box is in one mode from reset on. */
static union {
    uint32_t btn_rise[DETECT_MAX_PADS]; /* button mode: when each pad was last released */
    piezo_ram_t pz;
} mode_ram;
static uint32_t (&btn_rise)[DETECT_MAX_PADS] = mode_ram.btn_rise;
static piezo_ram_t &pz = mode_ram.pz;
static uint8_t btn_pressed_once;

/* ------------------------------------------------------------- sending */

/* HIT and HB lines, and the reply to CFG, are built a few fields at a time,
 * one step per scan, so a line never stalls sampling for more than a few
 * tens of microseconds. Other lines (short replies, HELLO, LVL) are rare
 * and built at once, after finishing any line in progress so sequence
 * numbers stay in order. */
enum { REC_HIT = 1, REC_HB };
typedef struct {
    uint8_t kind;
    uint8_t pad;
    uint8_t slap;
    uint16_t peak;
    uint32_t t_us;
} rec_t;
#define RECQ_MASK 15u /* 16 records: a table's worth of hits and a heartbeat */
static rec_t recq[RECQ_MASK + 1u];
static uint8_t rec_head, rec_tail;
static proto_line_t fmt;
static uint8_t fmt_step;         /* 0: idle */
static uint8_t fmt_cfg;          /* the line in fmt belongs to the CFG reply */
static uint8_t cfg_next = 0xFF;  /* CFG reply: next pad (0-based), npads: "OK CFG", 0xFF: none */

static proto_line_t *line_now(const char *type);
static void send_now(void);

enum { STEP_CFG_LIMITS = 5, STEP_CFG_TIMES, STEP_CFG_XTALK, STEP_SEND = 9, STEP_TIME_REST, STEP_FINISH };
static uint16_t fmt_part; /* HIT/HB: the time's rest between two steps, then the finished length */
static uint8_t fmt_sent;  /* bytes of the finished line in fmt already in the UART queue */
static void queue_line(const proto_line_t *l);
#define SEND_CHUNK 8u     /* bytes copied to the UART queue per scan (~100 cycles) */

/* Queue the finished line in fmt a few bytes a scan, as the UART queue has
 * room: waiting here a scan at a time, never in a loop, so sampling never
 * stalls behind the serial line. 1 once all of it is queued (or it
 * overflowed and is not sent). */
static uint8_t fmt_send_step(void) {
    if (!fmt_part) return 1;
    uint8_t n = (uint8_t)(fmt.len - fmt_sent);
    if (n > SEND_CHUNK) n = SEND_CHUNK;
    if (tx_free() < n) return 0;
    for (; n; n--) {
        txq[tx_head] = (uint8_t)fmt.buf[fmt_sent++];
        tx_head = (uint8_t)((tx_head + 1u) & TXQ_MASK);
    }
    if (fmt_sent < fmt.len) return 0;
    fmt_sent = 0;
    return 1;
}

/* The CFG reply: one line per pad, then OK CFG. */
static void cfg_step(void) {
    const detect_pad_config_t *c = &det.pad[cfg_next < npads ? cfg_next : 0];
    switch (fmt_step) {
    case STEP_CFG_LIMITS:
        proto_add_u32(&fmt, c->slap);
        proto_add_u32(&fmt, c->touch);
        fmt_step = STEP_CFG_TIMES;
        break;
    case STEP_CFG_TIMES:
        proto_add_u32(&fmt, c->scan_us);
        proto_add_u32(&fmt, c->mask_us);
        fmt_step = STEP_CFG_XTALK;
        break;
    case STEP_CFG_XTALK:
        proto_add_u32(&fmt, c->xtalk);
        proto_add_u32(&fmt, c->xwin_us);
        fmt_step = STEP_FINISH;
        break;
    case STEP_FINISH:
        fmt_part = proto_finish(&fmt); /* 0: overflowed, not sent */
        fmt_step = STEP_SEND;
        break;
    default:
        if (!fmt_send_step()) break;
        fmt_step = 0;
        cfg_next = cfg_next >= npads ? 0xFF : (uint8_t)(cfg_next + 1);
        break;
    }
}

static void outbox_step(void) {
    if (fmt_step == 0) {
        if (rec_head != rec_tail) {
            proto_begin(&fmt, seq++, recq[rec_tail].kind == REC_HIT ? "HIT" : "HB");
            fmt_cfg = 0;
            fmt_step = 1;
        } else if (cfg_next != 0xFF) {
            fmt_cfg = 1;
            if (cfg_next >= npads) {
                proto_begin(&fmt, seq++, "OK");
                proto_add_str(&fmt, "CFG");
                fmt_step = STEP_FINISH;
            } else {
                proto_begin(&fmt, seq++, "CFG");
                proto_add_u32(&fmt, (uint32_t)cfg_next + 1u);
                fmt_step = STEP_CFG_LIMITS;
            }
        }
        return;
    }
    if (fmt_cfg) {
        cfg_step();
        return;
    }
    /* Every step a few hundred cycles at most: the time in two halves, the
     * CRC and the copy to the UART queue apart. */
    const rec_t *r = &recq[rec_tail];
    switch (fmt_step) {
    case 1:
        fmt_part = proto_add_u32_top(&fmt, r->t_us);
        fmt_step = STEP_TIME_REST;
        break;
    case STEP_TIME_REST:
        proto_add_u32_rest(&fmt, fmt_part);
        fmt_step = r->kind == REC_HIT ? 2 : STEP_FINISH;
        break;
    case 2:
        proto_add_u32(&fmt, (uint32_t)r->pad + 1u);
        proto_add_str(&fmt, r->slap ? "S" : "T");
        fmt_step = 3;
        break;
    case 3:
        proto_add_u32(&fmt, r->peak);
        fmt_step = STEP_FINISH;
        break;
    case STEP_FINISH:
        fmt_part = proto_finish(&fmt); /* 0: overflowed, not sent */
        fmt_step = STEP_SEND;
        break;
    default:
        if (!fmt_send_step()) break;
        rec_tail = (uint8_t)((rec_tail + 1) & RECQ_MASK);
        fmt_step = 0;
        break;
    }
}

static void outbox_flush(void) {
    while (fmt_step || rec_head != rec_tail || cfg_next != 0xFF) {
        tx_service(); /* a line waiting for room gets it */
        outbox_step();
    }
}

static void outbox_add(uint8_t kind, uint8_t pad, uint8_t slap, uint16_t peak, uint32_t t_us) {
    if ((uint8_t)((rec_head + 1) & RECQ_MASK) == rec_tail) outbox_flush(); /* full: never in practice */
    rec_t *r = &recq[rec_head];
    r->kind = kind;
    r->pad = pad;
    r->slap = slap;
    r->peak = peak;
    r->t_us = t_us;
    rec_head = (uint8_t)((rec_head + 1) & RECQ_MASK);
}

/** Copy a finished line to the UART queue, waiting for room (while keeping the UART busy). */
static void queue_line(const proto_line_t *l) {
    while (tx_free() < l->len) tx_service();
    for (uint8_t i = 0; i < l->len; i++) {
        txq[tx_head] = (uint8_t)l->buf[i];
        tx_head = (uint8_t)((tx_head + 1u) & TXQ_MASK);
    }
}

/* Lines built at once (HELLO, replies, LVL) use fmt too, once the outbox
 * has sent what it holds: 2 KB of RAM has no room for a second line
 * buffer. Only the main loop builds lines. */
static proto_line_t *line_now(const char *type) {
    outbox_flush();
    proto_begin(&fmt, seq++, type);
    return &fmt;
}

/** Finish the line line_now() began and queue it (waiting for room: these lines are rare). */
static void send_now(void) {
    if (proto_finish(&fmt)) queue_line(&fmt);
}

static void send_hello(void) {
    proto_line_t &l = *line_now("HELLO");
    proto_add_u32(&l, PROTO_VERSION);
    proto_add_str(&l, FW_VERSION);
    proto_add_u32(&l, npads);
    proto_add_u32(&l, button_mode ? BUTTON_RESOLUTION_US : scan_res_us);
    proto_add_str(&l, button_mode ? "button" : "piezo");
    proto_add_u32(&l, clock_us());
    send_now();
}

static void send_hit(uint8_t pad0, uint32_t t_us, uint8_t slap, uint16_t peak) {
    outbox_add(REC_HIT, pad0, slap, peak, t_us);
}

static void send_lvl(void) {
    proto_line_t &l = *line_now("LVL");
    proto_add_u32(&l, clock_us());
    proto_add_hex3(&l, lvl_latest, npads);
    proto_add_hex3(&l, lvl_peak, npads);
    for (uint8_t i = 0; i < npads; i++) lvl_peak[i] = lvl_latest[i];
    /* Levels are the one thing worth dropping when the link is busy; the
     * sequence number is used up anyway, so the host sees the gap. */
    if (tx_free() < PROTO_MAX_LINE) return;
    send_now();
}

static void send_ok(const proto_cmd_t *cmd) {
    proto_line_t &l = *line_now("OK");
    proto_add_cmd_echo(&l, cmd);
    send_now();
}

static void send_err(uint8_t err, const char *word) {
    proto_line_t &l = *line_now("ERR");
    proto_add_str(&l, proto_err_name(err));
    proto_add_str(&l, word);
    send_now();
}

/* -------------------------------------------------------------- EEPROM */

/* Layout: 'P' 'B' layout npads, 16 bytes a pad (slap, touch, scan: 2 each,
 * xtalk, spare, mask, xwin: 4 each, little-endian), CRC-16 of all before. */
static uint8_t image_byte(uint16_t i) {
    if (i == 0) return EEPROM_MAGIC0;
    if (i == 1) return EEPROM_MAGIC1;
    if (i == 2) return EEPROM_LAYOUT;
    if (i == 3) return DETECT_MAX_PADS;
    i -= 4;
    const detect_pad_config_t *c = &det.pad[i / EEPROM_PAD_BYTES];
    uint8_t off = (uint8_t)(i % EEPROM_PAD_BYTES);
    uint32_t v;
    uint8_t shift;
    if (off < 2) { v = c->slap; shift = off; }
    else if (off < 4) { v = c->touch; shift = off - 2; }
    else if (off < 6) { v = c->scan_us; shift = off - 4; }
    else if (off == 6) { v = c->xtalk; shift = 0; }
    else if (off == 7) { v = 0; shift = 0; }
    else if (off < 12) { v = c->mask_us; shift = off - 8; }
    else { v = c->xwin_us; shift = off - 12; }
    return (uint8_t)(v >> (8 * shift));
}

static uint16_t image_crc(void) {
    uint16_t crc = 0;
    for (uint16_t i = 0; i < EEPROM_SIZE - 2; i++) {
        char b = (char)image_byte(i);
        /* proto_crc over one byte at a time, chained */
        crc ^= (uint16_t)((uint8_t)b) << 8;
        for (uint8_t k = 0; k < 8; k++) crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

static int16_t save_pos = -1; /* next EEPROM byte to write, -1: idle */
static uint16_t save_crc;

static uint8_t saved_byte(uint16_t i) {
    if (i < EEPROM_SIZE - 2) return image_byte(i);
    return i == EEPROM_SIZE - 2 ? (uint8_t)(save_crc & 0xFF) : (uint8_t)(save_crc >> 8);
}

/* One byte per call when the EEPROM is ready, so scanning never stops for
 * the ~3.4 ms each write takes; then verify and answer. */
static void save_service(void) {
    if (save_pos < 0 || !eeprom_is_ready()) return;
    if (save_pos < EEPROM_SIZE) {
        eeprom_update_byte((uint8_t *)(uintptr_t)save_pos, saved_byte((uint16_t)save_pos));
        save_pos++;
        return;
    }
    uint8_t ok = 1;
    for (uint16_t i = 0; i < EEPROM_SIZE; i++)
        if (eeprom_read_byte((const uint8_t *)(uintptr_t)i) != saved_byte(i)) ok = 0;
    save_pos = -1;
    if (ok) {
        proto_cmd_t cmd = {PROTO_CMD_SAVE, 0, 0, 0};
        send_ok(&cmd);
    } else {
        send_err(PROTO_ERR_EEPROM, "SAVE");
    }
}

/* Not inlined: its 134-byte buffer lives on the stack only while it runs
 * (inlined into setup, it would stay on the stack for good, under every scan). */
__attribute__((noinline)) static void settings_load(void) {
    uint8_t raw[EEPROM_SIZE];
    eeprom_read_block(raw, (const void *)0, EEPROM_SIZE);
    if (raw[0] != EEPROM_MAGIC0 || raw[1] != EEPROM_MAGIC1 || raw[2] != EEPROM_LAYOUT ||
        raw[3] != DETECT_MAX_PADS)
        return; /* blank or foreign EEPROM: factory settings */
    if (proto_crc((const char *)raw, EEPROM_SIZE - 2) !=
        (uint16_t)(raw[EEPROM_SIZE - 2] | (raw[EEPROM_SIZE - 1] << 8)))
        return;
    for (uint8_t p = 0; p < DETECT_MAX_PADS; p++) {
        const uint8_t *b = raw + 4 + p * EEPROM_PAD_BYTES;
        detect_pad_config_t c;
        c.slap = (uint16_t)(b[0] | (b[1] << 8));
        c.touch = (uint16_t)(b[2] | (b[3] << 8));
        c.scan_us = (uint16_t)(b[4] | (b[5] << 8));
        c.xtalk = b[6];
        c.mask_us = (uint32_t)b[8] | ((uint32_t)b[9] << 8) | ((uint32_t)b[10] << 16) | ((uint32_t)b[11] << 24);
        c.xwin_us = (uint32_t)b[12] | ((uint32_t)b[13] << 8) | ((uint32_t)b[14] << 16) | ((uint32_t)b[15] << 24);
        /* Only values the protocol would accept. */
        if (c.slap < 1 || c.slap > 1023 || c.touch > 1023 || c.scan_us > 20000u || c.xtalk > 100 ||
            c.mask_us > 1000000ul || c.xwin_us > 100000ul)
            continue;
        det.pad[p] = c;
    }
    detect_settings_changed(&det);
}

/* ------------------------------------------------------------ commands */

static void set_param(const proto_cmd_t *cmd) {
    detect_pad_config_t *c = &det.pad[cmd->pad - 1];
    switch (cmd->param) {
    case PROTO_PARAM_SLAP: c->slap = (uint16_t)cmd->value; break;
    case PROTO_PARAM_TOUCH: c->touch = (uint16_t)cmd->value; break;
    case PROTO_PARAM_SCAN: c->scan_us = (uint16_t)cmd->value; break;
    case PROTO_PARAM_MASK: c->mask_us = cmd->value; break;
    case PROTO_PARAM_XTALK: c->xtalk = (uint8_t)cmd->value; break;
    case PROTO_PARAM_XWIN: c->xwin_us = cmd->value; break;
    }
}

__attribute__((noinline)) static void handle_line(const char *line, uint8_t len) {
    proto_cmd_t cmd;
    uint8_t err = proto_parse_command(line, len, npads, &cmd);
    if (err != PROTO_OK) {
        send_err(err, err <= PROTO_ERR_UNKNOWN ? "-" : proto_cmd_name(cmd.kind));
        return;
    }
    switch (cmd.kind) {
    case PROTO_CMD_HELLO: send_hello(); break;
    case PROTO_CMD_CFG: cfg_next = 0; break; /* built a step per scan (outbox) */
    case PROTO_CMD_SET:
        set_param(&cmd);
        detect_settings_changed(&det);
        send_ok(&cmd);
        break;
    case PROTO_CMD_SAVE: save_crc = image_crc(); save_pos = 0; break; /* answered when verified */
    case PROTO_CMD_STREAM:
        /* Peaks count from now: nothing stale from an earlier stream. */
        memset(lvl_peak, 0, sizeof lvl_peak);
        memset(lvl_latest, 0, sizeof lvl_latest);
        streaming = (uint8_t)cmd.value;
        send_ok(&cmd);
        next_lvl = clock_us() + LVL_PERIOD_US;
        break;
    case PROTO_CMD_DEFAULTS:
        for (uint8_t p = 0; p < DETECT_MAX_PADS; p++) detect_default_config(&det.pad[p]);
        detect_settings_changed(&det);
        send_ok(&cmd);
        break;
    }
}

static proto_rx_t rx;

static void rx_service(void) {
    if (!said_hello) return; /* nothing is answered before the HELLO */
    /* While a SAVE is in progress the reply is still owed: hold new input. */
    while (rx_tail != rx_head && save_pos < 0) {
        uint8_t c = rxq[rx_tail];
        rx_tail = (uint8_t)((rx_tail + 1) & 31);
        uint8_t r = proto_rx_feed(&rx, c);
        if (r == PROTO_RX_LONG) send_err(PROTO_ERR_LONG, "-");
        else if (r == PROTO_RX_LINE) handle_line(rx.buf, rx.len);
    }
}

/* --------------------------------------------------------------- pads */

static void adc_init(void) {
    ADMUX = _BV(REFS0);               /* AVCC reference, channel 0 */
    ADCSRB = 0;                       /* single conversions, started by us */
    DIDR0 = 0x3F;                     /* A0..A5: no digital input buffer (less noise) */
    ADCSRA = _BV(ADEN) | _BV(ADPS2);  /* enable, prescaler 16: 1 MHz ADC clock */
}

/* Enabled, prescaler 16 (1 MHz ADC clock); with ADSC: start a conversion.
 * Written whole (no read-modify-write): nothing else in ADCSRA is used. */
#define ADCSRA_ON (_BV(ADEN) | _BV(ADPS2))
#define ADC_MUX(ch) ((uint8_t)(_BV(REFS0) | (ch)))

/* Sample times. A conversion is stamped with TCNT1 alone (ticks of 0.5 us)
 * the moment it starts (the sample-and-hold). Its time in microseconds
 * comes from a reference: an earlier stamp rounded down to an even tick
 * (ref_tick) and that stamp's exact time (ref_us), read off the 32-bit
 * clock (stamp_us). A stamp d = stamp - ref_tick ticks later is at
 * ref_us + d / 2 us: exactly what clock_us() would have read then (its
 * rounding of ticks down to whole us included), for d up to 65534 ticks
 * (32.7 ms). The reference moves on at the end of the first scan that
 * finds it REF_MAX_US old, and after any work that may have waited on the
 * serial line (scan_resync). A sample's time is then a 16-bit subtract and
 * shift and an add to the reference in registers: no clock read, no cli,
 * no 32-bit load; detection's fast paths take its low 16 bits. (The stamp
 * of the conversion in flight and the reference live in pz between
 * scan_pads() and that work.) */

/* TCNT1 is read without masking interrupts: no interrupt handler touches
 * Timer1's 16-bit registers, so their shared TEMP byte stays ours. */
static inline uint16_t timer_stamp(void) __attribute__((always_inline));
static inline uint16_t timer_stamp(void) { return TCNT1; }

/** The time in us of a stamp taken at most 32.7 ms ago (65535 ticks): the
 * clock now, less the ticks since the stamp. */
static uint32_t stamp_us(uint16_t stamp) {
    uint16_t lo;
    uint32_t base = clock_read(&lo);
    /* In ticks: now is 2 base + lo, the stamp (lo - stamp) mod 65536 before it. */
    return base + (uint32_t)(((int32_t)lo - (int32_t)(uint16_t)(lo - stamp)) >> 1);
}

/* A conversion that waited this long for work on the serial line is done
 * again (scan_resync). */
#ifndef SCAN_RESTART_US
#define SCAN_RESTART_US 30000ul
#endif
/* The reference moves on once it is this old (at the end of a scan; one
 * scan would have to last 28 ms to outrun it). */
#define REF_MAX_US 4096u

/** The reference moves to a stamp taken at most 32.7 ms ago. */
static __attribute__((noinline)) void ref_at(uint16_t stamp) {
    pz.ref_us = stamp_us(stamp);
    pz.ref_tick = (uint16_t)(stamp & ~1u);
}

static void adc_start(uint8_t ch) {
    ADMUX = ADC_MUX(ch);
    ADCSRA = ADCSRA_ON | _BV(ADSC);
    pz.conv_stamp = timer_stamp();
}

/** After work that may have waited on the serial line (a reply, an LVL
 * line, a full outbox) while the conversion in flight (pz.conv_stamp) held
 * its sample: the reference moves to that conversion, so the scan's later
 * stamps count from it however long the wait. A wait over SCAN_RESTART_US
 * (never in practice: it takes a full outbox and a CFG reply at once) would
 * leave no reference near enough to both, so that pad is converted again
 * instead: its sample is taken after the wait. */
static __attribute__((noinline)) void scan_resync(void) {
    uint32_t t = pz.ref_us + ((uint16_t)(pz.conv_stamp - pz.ref_tick) >> 1);
    if ((int32_t)(clock_us() - t) > (int32_t)SCAN_RESTART_US) {
        ADCSRA = ADCSRA_ON | _BV(ADSC); /* the same pad: ADMUX is unchanged */
        pz.conv_stamp = timer_stamp();
        ref_at(pz.conv_stamp);
        return;
    }
    pz.ref_tick = (uint16_t)(pz.conv_stamp & ~1u);
    pz.ref_us = t;
}

static void send_hb_lvl(uint32_t now);

/** The hit just decided (in pz.decided: static, so the scan loop keeps no
 * stack frame) to the outbox, which waits for room when full (never in
 * practice): then the reference moves (scan_resync). Before HELLO (while
 * the scan period is measured) decisions are made, so the measurement is
 * honest, but nothing is sent. */
static __attribute__((noinline)) void send_decided(uint16_t stamp) {
    send_hit(pz.decided.pad, pz.decided.onset_us, pz.decided.is_slap, pz.decided.peak);
    pz.conv_stamp = stamp;
    scan_resync();
}

/* The rest of a scan's work, one small piece in each of the first slots
 * (while the ADC converts the next pad), so that no slot grows long: the
 * heartbeat (and LVL), received commands, EEPROM writes, a step of the
 * outbox. With fewer than four pads the last slot takes the pieces left. The checks are inline (a call that finds nothing to do would cost
 * its slot more than the check), the work is not. */
#define SLOT_OF(piece) ((piece) < PADBOX_PADS ? (piece) : PADBOX_PADS - 1)
enum { WORK_HB, WORK_RX, WORK_SAVE };

/** Work that may wait on the serial line (now: the time of the slot's
 * sample), then scan_resync(). */
static __attribute__((noinline)) void slot_work(uint8_t what, uint32_t now, uint16_t stamp) {
    pz.conv_stamp = stamp;
    if (what == WORK_HB) send_hb_lvl(now);
    else if (what == WORK_RX) rx_service();
    else save_service();
    scan_resync();
}

static uint8_t res_count;
static uint32_t res_start;

/* The scan period, averaged over 64 scans, rounded up to whole us. */
static __attribute__((noinline)) void measure_scan(uint32_t now) { /* (the scan loop counts the scans between) */
    if (res_count == 0) res_start = now;
    if (++res_count == 65) {
        scan_res_us = (uint16_t)((now - res_start + 63u) >> 6);
        res_count = 0;
    }
}

/* While streaming (calibration): levels are the deviation from the pad's
 * rest point (0 at rest), as thresholds and peaks are. */
static __attribute__((noinline)) void stream_level(uint8_t pad, uint16_t raw) {
    uint16_t lv = detect_level(&det, pad, raw);
    lvl_latest[pad] = lv;
    if (lv > lvl_peak[pad]) lvl_peak[pad] = lv;
}

static inline void scan_reload(scan_t &sc) __attribute__((always_inline));
static inline void scan_reload(scan_t &sc) {
    sc.stamp = pz.conv_stamp;
    sc.ref_tick = pz.ref_tick;
    sc.ref_us = pz.ref_us;
}

/** One sample slot: wait for pad k's conversion (s: its state), start the
 * next pad's, and process pad k's sample while that converts. */
static inline void scan_slot(scan_t &sc, const uint8_t k, detect_pad_state_t *const s) __attribute__((always_inline));
static inline void scan_slot(scan_t &sc, const uint8_t k, detect_pad_state_t *const s) {
    /* pad k's sample time, in us after the reference */
    uint16_t dus = (uint16_t)((uint16_t)(sc.stamp - sc.ref_tick) >> 1);
    while (ADCSRA & _BV(ADSC)) {}
    /* ADCL first: it holds the result of the channel still in ADMUX (read,
     * it locks the result until ADCH is read; the next conversion ends
     * 13 us later). Then the next conversion starts at once. */
    uint8_t v_lo = ADCL;
    ADMUX = ADC_MUX(k + 1u < PADBOX_PADS ? k + 1u : 0u);
    ADCSRA = ADCSRA_ON | _BV(ADSC);
    sc.stamp = timer_stamp();
    uint16_t v = (uint16_t)(v_lo | ((uint16_t)ADCH << 8));
    /* pad k's time (its low 16 bits are all the fast paths take) */
    const uint32_t t = sc.ref_us + dus;
    detect_sample_at(&det, s, k, v, t);
    if (streaming) stream_level(k, v);
    tx_service();
    if (detect_poll_at(&det, s, k, t, &pz.decided) && said_hello) {
        send_decided(sc.stamp);
        scan_reload(sc);
    }
    if (k == SLOT_OF(0)) {
        /* (t: pad 1's sample time even if a decision just moved the reference) */
        if ((int32_t)(t - next_hb) >= 0 || streaming) {
            slot_work(WORK_HB, t, sc.stamp);
            scan_reload(sc);
        }
    }
    if (k == SLOT_OF(1)) {
        if (rx_tail != rx_head) {
            slot_work(WORK_RX, 0, sc.stamp);
            scan_reload(sc);
        }
    }
    if (k == SLOT_OF(2)) {
        if (save_pos >= 0) {
            slot_work(WORK_SAVE, 0, sc.stamp);
            scan_reload(sc);
        }
    }
    if (k == SLOT_OF(3)) {
        if (fmt_step || rec_head != rec_tail || cfg_next != 0xFF) outbox_step(); /* never waits */
    }
}

/* The scan's slots written out one a pad (the plain -O2 build: 1900 cycles
 * a quiet scan against 2260 in a loop), or a loop (the Arduino IDE's -Os
 * build, where the eight copies would each call detect_sample_at() and
 * detect_poll_at() out of line: 2590 against 2950). */
#ifndef SCAN_UNROLLED
#ifdef __OPTIMIZE_SIZE__
#define SCAN_UNROLLED 0
#else
#define SCAN_UNROLLED 1
#endif
#endif

/** Scans of all pads, each sample processed while the next converts, and
 * each scan measured: count of them, or forever (0). One loop rather than a
 * call per scan: its saved registers would cost every scan. Pad 1's
 * conversion is in flight on entry and on return. */
static void scan_pads(uint8_t count) {
    pz.scans_left = count;
    scan_t sc;
    ref_at(pz.conv_stamp);
    scan_reload(sc);
    for (;;) {
#if SCAN_UNROLLED
        /* k constant in each copy: the pad's state and ADMUX are fixed
         * addresses and values, the slot's pieces of work chosen at build */
        scan_slot(sc, 0, &det.st[0]);
        if (PADBOX_PADS > 1) scan_slot(sc, 1, &det.st[1]);
        if (PADBOX_PADS > 2) scan_slot(sc, 2, &det.st[2]);
        if (PADBOX_PADS > 3) scan_slot(sc, 3, &det.st[3]);
        if (PADBOX_PADS > 4) scan_slot(sc, 4, &det.st[4]);
        if (PADBOX_PADS > 5) scan_slot(sc, 5, &det.st[5]);
        if (PADBOX_PADS > 6) scan_slot(sc, 6, &det.st[6]);
        if (PADBOX_PADS > 7) scan_slot(sc, 7, &det.st[7]);
#else
        detect_pad_state_t *s = det.st; /* (one pointer walked, not an index) */
        for (uint8_t k = 0; k < PADBOX_PADS; k++, s++) scan_slot(sc, k, s);
#endif
        /* pad 1's next sample time, after the reference */
        uint16_t dus = (uint16_t)((uint16_t)(sc.stamp - sc.ref_tick) >> 1);
        if (res_count == 0 || res_count == 64) measure_scan(sc.ref_us + dus);
        else res_count++;
        /* A reference over 4 ms old moves to that conversion (from the
         * 32-bit clock): stamps stay far within its 32.7 ms. */
        if (dus >= REF_MAX_US) {
            ref_at(sc.stamp);
            sc.ref_tick = pz.ref_tick;
            sc.ref_us = pz.ref_us;
        }
        det.work = DETECT_WORK_PER_SCAN; /* heavy work: a few hundred cycles a unit */
        if (pz.scans_left && --pz.scans_left == 0) break;
    }
    pz.conv_stamp = sc.stamp;
}

static void buttons_init(void) {
    /* D2..D7 = PD2..PD7 (pads 1..6), D8..D9 = PB0..PB1 (pads 7..8), pull-ups. */
    DDRD &= (uint8_t)~0xFC;
    PORTD |= 0xFC;
    DDRB &= (uint8_t)~0x03;
    PORTB |= 0x03;
    uint8_t mask = (uint8_t)((1u << npads) - 1u);
    PCMSK2 = (uint8_t)((mask << 2) & 0xFC);
    PCMSK0 = (uint8_t)((mask >> 6) & 0x03);
    PCIFR = _BV(PCIF0) | _BV(PCIF2);
    PCICR = _BV(PCIE0) | _BV(PCIE2);
}

static uint8_t buttons_read(void) { return (uint8_t)(((PIND >> 2) & 0x3F) | ((PINB & 0x03) << 6)); }

/* Stamp presses at the edge: a press counts when the pad had been released
 * for BUTTON_RELEASE_US (release bounce) and its mask time has passed
 * since the last counted press (press bounce). */
static void buttons_edge(void) {
    uint32_t t = clock_us();
    uint8_t now = buttons_read();
    uint8_t changed = now ^ btn_last;
    btn_last = now;
    for (uint8_t p = 0; p < npads; p++) {
        uint8_t bit = (uint8_t)(1u << p);
        if (!(changed & bit)) continue;
        if (now & bit) {
            btn_rise[p] = t;
            continue;
        }
        if ((int32_t)(t - btn_rise[p]) < (int32_t)BUTTON_RELEASE_US) continue;
        if ((btn_pressed_once & bit) && (int32_t)(t - btn_press[p]) < (int32_t)det.pad[p].mask_us) continue;
        btn_pressed_once |= bit;
        btn_press[p] = t;
        uint8_t next = (uint8_t)((press_head + 1) & 7);
        if (next != press_tail) {
            pressq[press_head].pad = p;
            pressq[press_head].t_us = t;
            press_head = next;
        }
    }
}

ISR(PCINT0_vect) { buttons_edge(); }
ISR(PCINT2_vect, ISR_ALIASOF(PCINT0_vect));

/* ---------------------------------------------------------- main loop */

static void send_hb_lvl(uint32_t now) {
    if ((int32_t)(now - next_hb) >= 0) {
        next_hb += HB_PERIOD_US;
        outbox_add(REC_HB, 0, 0, 0, now);
    }
    if (streaming && (int32_t)(now - next_lvl) >= 0) {
        next_lvl += LVL_PERIOD_US;
        send_lvl();
    }
}

void setup(void) {
    cli();
    clock_init();
    uart_init();
    /* Mode jumper: D12 (PB4) to GND at reset selects button pads. */
    DDRB &= (uint8_t)~_BV(PB4);
    PORTB |= _BV(PB4);
    detect_init(&det, npads);
    settings_load();
    sei();
    for (volatile uint8_t i = 0; i < 100; i++) {} /* let the pull-up settle */
    button_mode = !(PINB & _BV(PB4));
    if (button_mode) {
        for (uint8_t p = 0; p < DETECT_MAX_PADS; p++) btn_rise[p] = clock_us() - BUTTON_RELEASE_US;
        btn_last = buttons_read();
        buttons_init();
        scan_res_us = BUTTON_RESOLUTION_US;
    } else {
        next_hb = clock_us() + HB_PERIOD_US;
        adc_init();
        adc_start(0);
        /* Measure the scan period, and learn every pad's rest point and
         * noise floor (hum), for BOOT_LEARN_SCANS scans before saying
         * hello; contacts seen meanwhile are forgotten. */
        scan_pads(BOOT_LEARN_SCANS);
        detect_reset_state(&det);
    }
    uint32_t now = clock_us();
    next_hb = now + HB_PERIOD_US;
    next_lvl = now + LVL_PERIOD_US;
    send_hello();
    said_hello = 1;
}

void loop(void) {
    if (!button_mode) {
        scan_pads(0); /* never returns */
        return;
    }
    while (press_tail != press_head) {
        press_t p;
        cli();
        p.pad = pressq[press_tail].pad;
        p.t_us = pressq[press_tail].t_us;
        sei();
        press_tail = (uint8_t)((press_tail + 1) & 7);
        send_hit(p.pad, p.t_us, 1, 1023);
    }
    outbox_step();
    uint8_t b = buttons_read();
    for (uint8_t p = 0; p < npads; p++) {
        lvl_latest[p] = (b & (1u << p)) ? 0 : 1023;
        if (lvl_latest[p] > lvl_peak[p]) lvl_peak[p] = lvl_latest[p];
    }
    tx_service();
    send_hb_lvl(clock_us());
    rx_service();
    save_service();
}
