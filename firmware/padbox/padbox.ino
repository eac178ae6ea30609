/*
 * padbox.ino - the tabletop-companion pad box: up to 8 piezo pads (A0..A7)
 * or 8 button pads (D2..D9) on an ATmega328P at 16 MHz (Arduino Nano),
 * timestamped hits to the host over USB serial (firmware/PROTOCOL.md).
 *
 * Builds two ways, to the same behaviour:
 *   - `make -C firmware` (plain avr-gcc + avr-libc; firmware/avr/main.cpp
 *     calls setup() and loop()), the image the simulator tests run;
 *   - the Arduino IDE (open this folder, board "Arduino Nano"); the core's
 *     Timer0 millis interrupt then also runs (~1 % of the CPU; it can hold
 *     a sample's conversion start back by up to ~5 us).
 * Only avr-libc is used here, no Arduino API, so both builds agree.
 *
 * Time base: Timer1 counts at 2 MHz (prescaler 8); its overflow interrupt
 * extends it to a 32-bit microsecond clock that wraps every 71.6 minutes.
 *
 * Sampling ("Sampling" below): the ADC runs at 1 MHz (prescaler 16, within
 * the 50 kHz..1 MHz the datasheet allows for reduced, still ~9-bit-clean
 * accuracy), 13 us a conversion. Timer2's interrupt starts one every 18.5
 * us into a FIFO; the loop runs detection on each sample from there, and
 * slows the sampler down evenly while it works off a burst. Sample times
 * are counted, not read: exact to the microsecond. HELLO's resolution is
 * the quiet scan period (148 us with 8 pads).
 *
 * Serial: 250000 baud, UBRR = 3, exact at 16 MHz (see PROTOCOL.md). Output
 * goes through a 128-byte queue, fed to the UART one byte at a time from
 * inside the scan loop (no transmit interrupt). Input arrives by the
 * receive interrupt into a small ring.
 *
 * Mode: piezo unless D12 is tied to GND at reset (then button mode).
 */
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/pgmspace.h>
#include <string.h>

#include "detect.h"
#include "proto.h"

#define FW_VERSION "2.1.0"
#ifndef PADBOX_PADS
#define PADBOX_PADS 8
#endif
/* Timer1 ticks (0.5 us) from one conversion to the next while the loop
 * keeps up ("Sampling"): 18.5 us (148 us a scan of 8 pads), a 13 us
 * conversion, and the 296 cycles a quiet sample needs: the handler's ~70,
 * the loop's ~80 and detect_sample_fast's ~130. */
#ifndef SAMPLE_TICKS
#define SAMPLE_TICKS 37u
#endif
/* One scan of all pads, rounded up to whole us: the resolution HELLO gives. */
#define SCAN_US ((PADBOX_PADS * SAMPLE_TICKS + 1u) / 2u)
#define HB_PERIOD_US 500000ul
#define LVL_PERIOD_US 50000ul
#define BOOT_LEARN_SCANS 150u  /* x 148 us: 22 ms, more than a mains period */
#define BUTTON_RELEASE_US 5000ul  /* a press counts only after 5 ms released */
#define BUTTON_RESOLUTION_US 8u   /* edge interrupt latency bound, worst case */
#define EEPROM_MAGIC0 'P'
#define EEPROM_MAGIC1 'B'
#define EEPROM_LAYOUT 1
#define EEPROM_PAD_BYTES 16
#define EEPROM_SIZE (4 + EEPROM_PAD_BYTES * DETECT_MAX_PADS + 2)

/* ---------------------------------------------------------------- clock */

/* The scan's place in the sample FIFO, kept in registers by scan_pads():
 * the next sample to take and its time in microseconds plus a half
 * (frac). Declared before any function: the Arduino IDE puts its
 * prototypes there. */
typedef struct {
    uint8_t tail;
    uint8_t frac;
    uint32_t t_us;
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
static uint16_t lvl_latest[DETECT_MAX_PADS];
static uint16_t lvl_peak[DETECT_MAX_PADS];
static uint8_t streaming;
static uint32_t next_hb, next_lvl;

/* Button presses from the pin-change interrupt to the main loop. */
typedef struct {
    uint8_t pad;
    uint32_t t_us;
} press_t;
static volatile uint8_t press_head;
static uint8_t press_tail;
static uint8_t btn_last = 0xFF; /* 1 = released (pull-up) */

/* What only the piezo scan needs: the samples from the sampling interrupt
 * (see "Sampling") and the loop's place in them ... */
#ifndef FIFO_N
#define FIFO_N 128u /* samples (a power of two, 2 x PADBOX_PADS to 128): 16 scans of 8 pads, 2.4 ms */
#endif
typedef struct {
    uint16_t fifo[FIFO_N]; /* the handler's results, entry n mod FIFO_N */
    uint8_t tail;          /* the loop's next sample (mod 256, like fifo_head) ... */
    uint8_t frac;          /* ... and its time: t_us plus frac half microseconds */
    uint32_t t_us;
    detect_hit_t decided;  /* a pad's decision, as detect_poll_at() writes it */
    uint8_t restart;       /* samples were written over: the sampler starts afresh at the scan's end */
    uint8_t scans_left;    /* scan_pads(): scans still to do, 0: forever */
} piezo_ram_t;
/* ... and what only button mode needs share their RAM (2 KB: the stack's
 * headroom is what is left): a box is in one mode from reset on. */
typedef struct {
    uint32_t rise[DETECT_MAX_PADS];  /* when each pad was last released */
    uint32_t press[DETECT_MAX_PADS]; /* and last counted as pressed */
    press_t q[8];                    /* presses from the interrupt to the loop */
} button_ram_t;
static union {
    button_ram_t btn;
    piezo_ram_t pz;
} mode_ram;
static uint32_t (&btn_rise)[DETECT_MAX_PADS] = mode_ram.btn.rise;
static uint32_t (&btn_press)[DETECT_MAX_PADS] = mode_ram.btn.press;
static volatile press_t (&pressq)[8] = *(volatile press_t (*)[8])&mode_ram.btn.q;
static piezo_ram_t &pz = mode_ram.pz;
static uint8_t btn_pressed_once;

/* A wait on the serial line this long (a reply behind a full outbox) may
 * have let the sampling handler go round its FIFO, even more than once
 * (its count is a byte, which fifo_catch_up() reads): less than FIFO_N
 * sample periods, with room for the scan it ends. */
#ifndef FIFO_SAFE_US
#define FIFO_SAFE_US ((uint16_t)((FIFO_N - 2u * PADBOX_PADS) * SAMPLE_TICKS / 2u))
#endif
/** After a wait on the serial line that began at device time started: the
 * sampler starts afresh at the scan's end if it may have gone round. */
static void waited_since(uint32_t started) {
    if (!button_mode && clock_us() - started > FIFO_SAFE_US) pz.restart = 1;
}

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

static proto_line_t *line_now(const char *rom_type);
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
            proto_begin(&fmt, seq++, recq[rec_tail].kind == REC_HIT ? PSTR("HIT") : PSTR("HB"));
            fmt_cfg = 0;
            fmt_step = 1;
        } else if (cfg_next != 0xFF) {
            fmt_cfg = 1;
            if (cfg_next >= npads) {
                proto_begin(&fmt, seq++, PSTR("OK"));
                proto_add_rom_str(&fmt, PSTR("CFG"));
                fmt_step = STEP_FINISH;
            } else {
                proto_begin(&fmt, seq++, PSTR("CFG"));
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
        proto_add_rom_str(&fmt, r->slap ? PSTR("S") : PSTR("T"));
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
    uint32_t started = 0; /* (the clock read only if there is a wait) */
    while (fmt_step || rec_head != rec_tail || cfg_next != 0xFF) {
        if (!started) started = clock_us() | 1u;
        tx_service(); /* a line waiting for room gets it */
        outbox_step();
    }
    if (started) waited_since(started);
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
    if (tx_free() < l->len) {
        uint32_t started = clock_us();
        while (tx_free() < l->len) tx_service();
        waited_since(started);
    }
    for (uint8_t i = 0; i < l->len; i++) {
        txq[tx_head] = (uint8_t)l->buf[i];
        tx_head = (uint8_t)((tx_head + 1u) & TXQ_MASK);
    }
}

/* Lines built at once (HELLO, replies, LVL) use fmt too, once the outbox
 * has sent what it holds: 2 KB of RAM has no room for a second line
 * buffer. Only the main loop builds lines. */
static proto_line_t *line_now(const char *rom_type) {
    outbox_flush();
    proto_begin(&fmt, seq++, rom_type);
    return &fmt;
}

/** Finish the line line_now() began and queue it (waiting for room: these lines are rare). */
static void send_now(void) {
    if (proto_finish(&fmt)) queue_line(&fmt);
}

static void send_hello(void) {
    proto_line_t &l = *line_now(PSTR("HELLO"));
    proto_add_u32(&l, PROTO_VERSION);
    proto_add_rom_str(&l, PSTR(FW_VERSION));
    proto_add_u32(&l, npads);
    proto_add_u32(&l, button_mode ? BUTTON_RESOLUTION_US : SCAN_US);
    proto_add_rom_str(&l, button_mode ? PSTR("button") : PSTR("piezo"));
    proto_add_u32(&l, clock_us());
    send_now();
}

static void send_hit(uint8_t pad0, uint32_t t_us, uint8_t slap, uint16_t peak) {
    outbox_add(REC_HIT, pad0, slap, peak, t_us);
}

static void send_lvl(void) {
    proto_line_t &l = *line_now(PSTR("LVL"));
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
    proto_line_t &l = *line_now(PSTR("OK"));
    proto_add_cmd_echo(&l, cmd);
    send_now();
}

/** ERR, and the command it answers (PROTO_CMD_NONE: "-"). */
static void send_err(uint8_t err, uint8_t kind) {
    proto_line_t &l = *line_now(PSTR("ERR"));
    proto_add_rom_str(&l, proto_err_name(err));
    proto_add_rom_str(&l, proto_cmd_name(kind));
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
        send_err(PROTO_ERR_EEPROM, PROTO_CMD_SAVE);
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
        send_err(err, err <= PROTO_ERR_UNKNOWN ? (uint8_t)PROTO_CMD_NONE : cmd.kind);
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
        if (r == PROTO_RX_LONG) send_err(PROTO_ERR_LONG, PROTO_CMD_NONE);
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

/* Sampling. Timer2 counts the same 0.5 us ticks as Timer1 and interrupts
 * every SAMPLE_TICKS of them (18.5 us, CTC mode): the handler takes the
 * conversion that ended meanwhile, starts the next pad's at once and puts
 * the result in a FIFO. So each pad is sampled exactly every PADBOX_PADS x
 * 18.5 us (148 us with 8 pads), whatever detection or the serial line is
 * doing (while the loop keeps up: see "Pacing" below). The main loop
 * takes the samples from the FIFO in order and catches up: a contact's
 * start, its walk back or a decision that costs a few sample periods only
 * fills the FIFO a little. No time is stored with a sample: each
 * conversion starts one period after the one before (SAMPLE_TICKS, plus
 * the extra ticks the sample carries when paced), on the same crystal and
 * prescale as the clock, at the handler's fixed latency, so the loop counts
 * the times on in half microseconds (scan_t). */
#define FIFO_MASK (FIFO_N - 1u)
/* From starting Timer2's count (sampler_start) to the sample-and-hold of
 * the first match's conversion, in Timer1 ticks beyond SAMPLE_TICKS: the
 * match's flag, the interrupt's response and the handler's first
 * instructions (24 cycles). Checked in the simulator against its log of
 * conversion starts: tests/firmware/test_firmware_sim.py replays that log
 * through the detection core on the host and gets the image's onsets. */
#ifndef SAMPLE_DELAY_TICKS
#define SAMPLE_DELAY_TICKS 5u
#endif
/* Times the sampler started afresh because the FIFO overflowed (a long
 * wait on the serial line), saturating at 255: GPIOR1, which the simulator
 * harness reports. */
#define SAMPLER_RESTARTS GPIOR1
/* The FIFO's fill at the end of the fullest scan (the harness reports it too). */
#define FIFO_PEAK GPIOR2

static volatile uint8_t fifo_head; /* samples the handler has stored (mod 256) */
static uint8_t next_mux;           /* ADMUX for the next conversion */
static uint8_t gap_extra;          /* the extra ticks after the conversion in flight, halved, x 4 (bits 2..7) */
static volatile uint8_t gap_next;  /* the loop's choice for the periods to come: extra ticks x 2 ... */
static volatile uint8_t ocr_next;  /* ... and OCR2A for them (SAMPLE_TICKS - 1 + extra) */
/* A loop more than FIFO_SLOW samples behind at a scan's end slows the
 * sampling down (set_pace): the periods to come are 4 ticks (2 us) longer
 * for every sample beyond it, up to 126 ticks, and each sample carries its
 * period's extra ticks, halved, in its bits 10..15 (SAMPLE_EXTRA_TICKS). So a
 * burst of heavy work (eight contacts at once, every pad ringing after
 * them) slows the sampling just as much as it needs, evenly, for as long
 * as it lasts, and no sample is lost. */
#ifndef FIFO_SLOW
#define FIFO_SLOW 72u
#endif
#define EXTRA_UNITS_MAX 63u /* of 2 ticks: 63 us at most */
#ifndef PACE_GAIN
#define PACE_GAIN 2u /* units a sample beyond FIFO_SLOW */
#endif
#define SAMPLE_EXTRA_TICKS(v) ((uint8_t)(((v) >> 10) << 1))

/* The handler in assembly: avr-gcc's saves eleven registers. Only lds,
 * sts, ldi and push come before the conversion starts (they leave SREG
 * alone), so the sample-and-hold is 24 cycles after the match, always. */
ISR(TIMER2_COMPA_vect, ISR_NAKED) {
    asm volatile(
        "push r24\n\t"
        "push r25\n\t"
        "push r30\n\t"
        /* ADCL first: it holds the result of the channel still in ADMUX
         * (read, it locks the result until ADCH is read). */
        "lds r24, %[adcl]\n\t"
        "lds r25, %[adch]\n\t"
        "lds r30, %[mux]\n\t"
        "sts %[admux], r30\n\t"
        "ldi r30, %[start]\n\t"
        "sts %[adcsra], r30\n\t" /* the next pad's sample-and-hold */
        "push r31\n\t"
        "in r31, __SREG__\n\t"
        "push r31\n\t"
        /* the ADMUX after it: the next pad, pad 1 after the last */
        "lds r30, %[mux]\n\t"
        "inc r30\n\t"
        "cpi r30, %[mux_end]\n\t"
        "brne 1f\n\t"
        "ldi r30, %[mux_first]\n"
        "1:\n\t"
        "sts %[mux], r30\n\t"
        /* the period after the conversion just read, set at the last match */
        "lds r30, %[gap]\n\t"
        "or r25, r30\n\t"
        /* into the FIFO at head mod FIFO_N, head one on */
        "lds r31, %[head]\n\t"
        "mov r30, r31\n\t"
        "lsl r30\n\t"
        "andi r30, %[mask2]\n\t"
        "subi r31, 0xFF\n\t"
        "sts %[head], r31\n\t"
        "ldi r31, 0\n\t"
        "subi r30, lo8(-(%[fifo]))\n\t"
        "sbci r31, hi8(-(%[fifo]))\n\t"
        "st Z, r24\n\t"
        "std Z+1, r25\n\t"
        /* the period after the conversion just started, as the loop set it */
        "lds r30, %[gap_next]\n\t"
        "sts %[gap], r30\n\t"
        "lds r30, %[ocr_next]\n\t"
        "sts %[ocr], r30\n\t"
        "pop r31\n\t"
        "out __SREG__, r31\n\t"
        "pop r31\n\t"
        "pop r30\n\t"
        "pop r25\n\t"
        "pop r24\n\t"
        "reti\n\t" ::
        [adcl] "n"(_SFR_MEM_ADDR(ADCL)), [adch] "n"(_SFR_MEM_ADDR(ADCH)),
        [admux] "n"(_SFR_MEM_ADDR(ADMUX)), [adcsra] "n"(_SFR_MEM_ADDR(ADCSRA)),
        [ocr] "n"(_SFR_MEM_ADDR(OCR2A)),
        [start] "M"(ADCSRA_ON | _BV(ADSC)), [mux] "i"(&next_mux),
        [mux_end] "M"(ADC_MUX(PADBOX_PADS)), [mux_first] "M"(ADC_MUX(0)),
        [head] "i"(&fifo_head), [gap] "i"(&gap_extra), [gap_next] "i"(&gap_next), [ocr_next] "i"(&ocr_next),
        [fifo] "i"(&mode_ram.pz.fifo[0]), [mask2] "M"(FIFO_MASK << 1));
}

/** Start the sampler; the loop's first sample is pad 1's (pz.tail, pz.t_us). */
static void sampler_start(void) {
    cli();
    TCCR2A = _BV(WGM21); /* CTC: the count restarts after OCR2A */
    TCCR2B = 0;
    OCR2A = SAMPLE_TICKS - 1u;
    TCNT2 = 0;
    TIFR2 = _BV(OCF2A);
    TIMSK2 = _BV(OCIE2A);
    uint16_t lo;
    uint32_t base = clock_read(&lo);
    TCCR2B = _BV(CS21); /* clk/8, as Timer1: the first match SAMPLE_TICKS from now */
    /* Pad 1's first conversion by hand, about a sample period before the
     * first match's (it is learnt from, never judged): entry 0. Entry n is
     * then the conversion match n started, entry 1 at lo + SAMPLE_TICKS +
     * SAMPLE_DELAY_TICKS. */
    ADMUX = ADC_MUX(0);
    ADCSRA = ADCSRA_ON | _BV(ADSC);
    next_mux = ADC_MUX(PADBOX_PADS > 1 ? 1 : 0);
    fifo_head = 0;
    gap_extra = 0;
    gap_next = 0;
    ocr_next = SAMPLE_TICKS - 1u;
    pz.tail = 0;
    pz.restart = 0;
    uint32_t ticks = (uint32_t)lo + SAMPLE_DELAY_TICKS; /* entry 0's, after base (an even tick) */
    pz.t_us = base + (ticks >> 1);
    pz.frac = (uint8_t)(ticks & 1u);
    sei();
}

/** The loop's place in the FIFO: the next sample (tail) and its time (t_us
 * and frac half microseconds). In registers in scan_pads(), in pz around
 * work that may wait on the serial line. */
static inline void scan_load(scan_t &sc) __attribute__((always_inline));
static inline void scan_load(scan_t &sc) {
    sc.tail = pz.tail;
    sc.frac = pz.frac;
    sc.t_us = pz.t_us;
}
static inline void scan_store(const scan_t &sc) __attribute__((always_inline));
static inline void scan_store(const scan_t &sc) {
    pz.tail = sc.tail;
    pz.frac = sc.frac;
    pz.t_us = sc.t_us;
}
/* A call out of the scan loop (work that may wait, or move the loop's
 * place): its place in pz for the call, back in registers after it. */
#define WITH_SCAN_IN_PZ(sc, call) \
    do {                          \
        scan_store(sc);           \
        call;                     \
        scan_load(sc);            \
    } while (0)
/** After work that may have waited on the serial line: if the handler
 * has written over samples not yet taken, the scan ends on what is there
 * (newer samples of the same pads, FIFO_N being a multiple of the pads)
 * and the sampler starts afresh at its end (pz.restart). */
static __attribute__((noinline)) void fifo_catch_up(void) {
    if ((uint8_t)(fifo_head - pz.tail) > FIFO_N) pz.restart = 1;
}

/** The sampler afresh, at a scan's end (pad 1 next), after samples were
 * written over (fifo_catch_up). */
static __attribute__((noinline)) void sampler_restart(void) {
    TCCR2B = 0;                       /* no more matches ... */
    while (ADCSRA & _BV(ADSC)) {}     /* ... and the conversion in flight done */
    sampler_start();
    SAMPLER_RESTARTS = (uint8_t)(SAMPLER_RESTARTS == 255u ? 255u : SAMPLER_RESTARTS + 1u);
}

static void send_hb_lvl(uint32_t now);

/** The hit just decided (in pz.decided: static, so the scan loop keeps no
 * stack frame) to the outbox, which waits for room when full (never in
 * practice). Before HELLO (while the pads' rest points are learnt)
 * decisions are made, so the start-up is honest, but nothing is sent. */
static __attribute__((noinline)) void send_decided(void) {
    send_hit(pz.decided.pad, pz.decided.onset_us, pz.decided.is_slap, pz.decided.peak);
    fifo_catch_up();
}

/* The rest of a scan's work, one small piece in each of the first slots,
 * so that no slot grows long: the heartbeat (and LVL), received commands,
 * EEPROM writes, a step of the outbox. With fewer than four pads the last
 * slot takes the pieces left. The checks are inline (a call that finds
 * nothing to do would cost its slot more than the check), the work is not. */
#define SLOT_OF(piece) ((piece) < PADBOX_PADS ? (piece) : PADBOX_PADS - 1)
enum { WORK_HB, WORK_RX, WORK_SAVE };
/** Work that may wait on the serial line, then the FIFO caught up. */
static __attribute__((noinline)) void slot_work(uint8_t what) {
    if (what == WORK_HB) send_hb_lvl(clock_us());
    else if (what == WORK_RX) rx_service();
    else save_service();
    fifo_catch_up();
}

/* While streaming (calibration): levels are the deviation from the pad's
 * rest point (0 at rest), as thresholds and peaks are. */
static __attribute__((noinline)) void stream_level(uint8_t pad, uint16_t raw) {
    uint16_t lv = detect_level(&det, pad, raw);
    lvl_latest[pad] = lv;
    if (lv > lvl_peak[pad]) lvl_peak[pad] = lv;
}

/** The sampling's pace from how far behind the loop is (fill: samples
 * waiting, at a scan's end and halfway through it), for the handler to take
 * at its next match. */
static inline void set_pace(uint8_t fill) __attribute__((always_inline));
static inline void set_pace(uint8_t fill) {
    uint8_t over = fill > FIFO_SLOW ? (uint8_t)(fill - FIFO_SLOW) : 0u;
    uint8_t units = over > EXTRA_UNITS_MAX / PACE_GAIN ? EXTRA_UNITS_MAX : (uint8_t)(PACE_GAIN * over); /* of 2 ticks */
    uint8_t sreg = SREG; /* (both at once: the handler reads them as a pair) */
    cli();
    gap_next = (uint8_t)(units << 2);
    ocr_next = (uint8_t)(SAMPLE_TICKS - 1u + 2u * units);
    SREG = sreg;
}

/** One sample slot: take pad k's next sample from the FIFO (s: its
 * state; waiting for the handler if the loop is ahead) and process it. */
static inline void scan_slot(scan_t &sc, const uint8_t k, detect_pad_state_t *const s) __attribute__((always_inline));
static inline void scan_slot(scan_t &sc, const uint8_t k, detect_pad_state_t *const s) {
    uint8_t tail = sc.tail;
    while (fifo_head == tail) tx_service();
    uint16_t v = pz.fifo[tail & FIFO_MASK];
    sc.tail = (uint8_t)(tail + 1u);
    const uint32_t t = sc.t_us; /* pad k's sample time */
    {
        /* the next sample's: SAMPLE_TICKS half microseconds on, and the extra */
        uint8_t f = (uint8_t)(sc.frac + SAMPLE_TICKS + SAMPLE_EXTRA_TICKS(v));
        v &= 0x3FFu;
        uint8_t us = (uint8_t)(f >> 1);
        /* (t_us += us in assembly: avr-gcc 5 sign-extends the byte through 32 bits first) */
        asm("add %A0, %1\n\tadc %B0, __zero_reg__\n\tadc %C0, __zero_reg__\n\tadc %D0, __zero_reg__"
            : "+r"(sc.t_us) : "r"(us));
        sc.frac = (uint8_t)(f & 1u);
    }
    /* (a pad at rest before this sample has nothing to decide after it:
     * only a scan's end makes a contact wait for its decision) */
    const uint8_t was_rest = s->state == DETECT_REST;
    detect_sample_at(&det, s, k, v, t);
    if (streaming) stream_level(k, v);
    if (k & 1u) tx_service(); /* (every other slot: a byte takes 40 us, a slot 18.5) */
    if (!was_rest && detect_poll_at(&det, s, k, t, &pz.decided) && said_hello) {
        WITH_SCAN_IN_PZ(sc, send_decided());
    }
    if (k == SLOT_OF(0)) {
        if ((int32_t)(t - next_hb) >= 0 || streaming) {
            WITH_SCAN_IN_PZ(sc, slot_work(WORK_HB));
        }
    }
    if (k == SLOT_OF(1)) {
        if (rx_tail != rx_head) {
            WITH_SCAN_IN_PZ(sc, slot_work(WORK_RX));
        }
    }
    if (k == SLOT_OF(2)) {
        if (save_pos >= 0) {
            WITH_SCAN_IN_PZ(sc, slot_work(WORK_SAVE));
        }
    }
    if (k == SLOT_OF(3)) {
        if (fmt_step || rec_head != rec_tail || cfg_next != 0xFF) outbox_step(); /* never waits */
        /* (and the pace at mid-scan too, as well as at its end: a burst's
         * heavy work can fill the FIFO within a scan) */
        if (PADBOX_PADS > 4) set_pace((uint8_t)(fifo_head - sc.tail));
    }
}

/* The scan's slots written out one a pad (the plain -O2 build), or a loop
 * (the Arduino IDE's -Os build, where the eight copies would each call
 * detect_sample_at() and detect_poll_at() out of line). */
#ifndef SCAN_UNROLLED
#ifdef __OPTIMIZE_SIZE__
#define SCAN_UNROLLED 0
#else
#define SCAN_UNROLLED 1
#endif
#endif

/* Heavy work a scan (det.work) by how far the loop is behind the sampler:
 * every start, walk back and decision at once until the FIFO is nearly
 * full, then one a scan. (Putting work off costs more than it saves: on
 * 1,000 model rounds, a budget of two a scan while the loop was within
 * two scans of the sampler dropped 15 % more slaps and doubled the onset
 * error's 99th percentile, against the pacing slowing the sampler a
 * little more.) */
#ifndef WORK_FREE_FILL
#define WORK_FREE_FILL 112u
#endif
static inline uint8_t work_for(uint8_t fill) __attribute__((always_inline));
static inline uint8_t work_for(uint8_t fill) {
    if (fill < WORK_FREE_FILL) return 0xFFu;
    return 1u;
}

/** Scans of all pads from the FIFO: count of them, or forever (0). One
 * loop rather than a call per scan: its saved registers would cost every
 * scan. Starts and ends at pad 1's sample (pz.tail). */
static void scan_pads(uint8_t count) {
    pz.scans_left = count;
    fifo_catch_up();
    if (pz.restart) sampler_restart();
    scan_t sc;
    scan_load(sc);
    for (;;) {
#if SCAN_UNROLLED
        /* k constant in each copy: the pad's state a fixed address, the
         * slot's pieces of work chosen at build */
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
        uint8_t fill = (uint8_t)(fifo_head - sc.tail);
        set_pace(fill);
        if (fill > FIFO_PEAK) FIFO_PEAK = fill;
        if (fill > FIFO_N || pz.restart) WITH_SCAN_IN_PZ(sc, sampler_restart());
        det.work = work_for(fill); /* heavy work: a few hundred cycles a unit */
        if (pz.scans_left && --pz.scans_left == 0) break;
    }
    scan_store(sc);
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
    } else {
        next_hb = clock_us() + HB_PERIOD_US;
        adc_init();
        sampler_start();
        /* Learn every pad's rest point and noise floor (hum) for
         * BOOT_LEARN_SCANS scans before saying hello; contacts seen
         * meanwhile are forgotten. */
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
