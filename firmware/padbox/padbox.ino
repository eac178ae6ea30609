/*
 * padbox.ino - the tabletop-companion pad box: up to 8 piezo pads (A0..A7)
 * or 8 button pads (D2..D9) on an ATmega328P at 16 MHz (Arduino Nano),
 * timestamped hits to the host over USB serial (firmware/PROTOCOL.md).
 *
 * Builds two ways, to the same behaviour:
 *   - `make -C firmware` (plain avr-gcc + avr-libc; firmware/avr/main.cpp
 *     calls setup() and loop()), the image the simulator tests run;
 *   - the Arduino IDE (open this folder, board "Arduino Nano"); setup()
 *     turns the core's Timer0 millis interrupt off (nothing here uses
 *     millis(), and its handler held the sampler's back long enough to
 *     lose samples of a busy scan).
 * Only avr-libc is used here, no Arduino API, so both builds agree.
 *
 * Time base: Timer1 counts at 2 MHz (prescaler 8); its overflow interrupt
 * extends it to a 32-bit microsecond clock that wraps every 71.6 minutes.
 *
 * Sampling ("Sampling" below): the ADC runs at 1 MHz (prescaler 16, within
 * the 50 kHz..1 MHz the datasheet allows for reduced, still ~9-bit-clean
 * accuracy), 13 us a conversion. Timer2's interrupt starts one every 18.5
 * us into a FIFO (its handler on registers r2..r7 of its own: the
 * Makefiles' -ffixed flags); the loop (in assembly) runs detection on each
 * sample from there, and slows the sampler down evenly while it works off
 * a burst. Sample times are counted, not read: exact to the microsecond.
 * HELLO's resolution is the quiet scan period (148 us with 8 pads).
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

#define FW_VERSION "2.37.0"
#ifndef PADBOX_PADS
#define PADBOX_PADS 8
#endif
/* Timer1 ticks (0.5 us) from one conversion to the next while the loop
 * keeps up ("Sampling"): 18.5 us (148 us a scan of 8 pads), a 13 us
 * conversion, and 296 cycles, of which a quiet sample takes ~247 (2.33.0;
 * 250 before): the handler's 35, the loop's ~65 with the scan's end,
 * detect_sample_fast's ~135 and its call; a ringing pad's sample ~280, a
 * burst's more (firmware/README.md). */
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

#define TXQ_SIZE 32u /* a power of two (128 before 2.29.0, 64 before 2.30.0: the RAM went to the sample FIFO); HIT/HB come a few bytes a scan */
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
/* LVL's peaks since the last LVL; its latest levels are worked out as it
 * is built (lvl_latest(): since 2.31.0, the 16 bytes went to the FIFO). */
static uint16_t lvl_peak[DETECT_MAX_PADS];
static uint16_t lvl_latest(uint8_t k);
static uint8_t streaming;
static uint32_t next_hb, next_lvl;

/* Button presses from the pin-change interrupt to the main loop. */
typedef struct {
    uint8_t pad;
    uint32_t t_us;
} press_t;

/* What only the piezo scan needs: the samples from the sampling interrupt
 * (see "Sampling") and the loop's place in them ... */
#ifndef FIFO_SCANS
#define FIFO_SCANS 62u /* scans the FIFO holds: 496 samples of 8 pads, 9.2 ms (2.31.0; 58 in 2.30.0, 44 in 2.29.0) */
#endif
#define FIFO_N (FIFO_SCANS * PADBOX_PADS) /* samples */
/* (Scans start at entries that are multiples of the pads. The sampling's
 * pace changes at odd scans only with a power of two of pads (since
 * 2.31.0: the pace's table, scan_ocr, has an entry every other scan, 31
 * bytes that went to the FIFO), at any scan with other numbers.) */
#if (PADBOX_PADS & (PADBOX_PADS - 1u)) == 0
#define PACE_EVERY 2u
#define PACE_BIT (PADBOX_PADS == 8 ? 3 : PADBOX_PADS == 4 ? 2 : PADBOX_PADS == 2 ? 1 : 0) /* the scans' parity in an entry */
#else
#define PACE_EVERY 1u
#define PACE_BIT 0
#endif
static_assert(PADBOX_PADS >= 1 && PADBOX_PADS <= 8, "PADBOX_PADS: 1 to 8");
static_assert(FIFO_SCANS >= 4u && FIFO_N < 512u, "FIFO_SCANS: at least 4 scans, under 512 samples");
static_assert(FIFO_SCANS % PACE_EVERY == 0, "FIFO_SCANS: even (the pace changes at odd scans)");
typedef struct {
    /* The handler's results, entry n mod FIFO_N: a conversion's 8 high
     * bits (ADCH, left adjusted), detect_raw8() makes them counts. A byte a
     * sample holds twice the samples in the same RAM (since 2.18.0): a
     * burst's backlog fits, and the sampler is slowed less often. */
    volatile uint8_t fifo[FIFO_N];
    uint16_t tail;         /* the loop's next sample, its entry (0 .. FIFO_N - 1) ... */
    uint8_t frac;          /* ... and its time: t_us plus frac half microseconds */
    uint8_t step;          /* the whole microseconds from it to the sample after it, ... */
    uint8_t step_xor;      /* ... the next step's change (the half microseconds alternate) */
    uint8_t period;        /* the sample period (ticks) from sample tail on */
    uint8_t scans;         /* scan_end(): its calls take turns at the chores */
    uint8_t outbox_hold;   /* scan_end(): its calls before the outbox is looked at again (OUTBOX_HOLD_CALLS) */
    uint8_t quick;         /* scan_end(): the next even scan's end may be scan_end_quick()'s */
    uint32_t t_us;
    detect_hit_t decided;  /* a pad's decision, as detect_poll_at() writes it */
    uint8_t restart;       /* samples were written over: the sampler starts afresh at the scan's end */
    uint8_t scans_left;    /* scan_pads(): scans still to do, 0: forever */
    uint16_t row;          /* the scan in progress: its first sample's entry (pad 1's) */
} piezo_ram_t;
/* ... and what only button mode needs share their RAM (2 KB: the stack's
 * headroom is what is left): a box is in one mode from reset on. */
typedef struct {
    uint32_t rise[DETECT_MAX_PADS];  /* when each pad was last released */
    uint32_t press[DETECT_MAX_PADS]; /* and last counted as pressed */
    press_t q[8];                    /* presses from the interrupt to the loop ... */
    volatile uint8_t q_head;         /* ... the interrupt's next ... */
    uint8_t q_tail;                  /* ... and the loop's */
    uint8_t last;                    /* the pads' pins at the last change, 1 = released (pull-up) */
    uint8_t pressed_once;            /* a bit a pad: pressed since reset (its mask applies) */
} button_ram_t;
static union {
    button_ram_t btn;
    piezo_ram_t pz;
} mode_ram;
static uint32_t (&btn_rise)[DETECT_MAX_PADS] = mode_ram.btn.rise;
static uint32_t (&btn_press)[DETECT_MAX_PADS] = mode_ram.btn.press;
static volatile press_t (&pressq)[8] = *(volatile press_t (*)[8])&mode_ram.btn.q;
static piezo_ram_t &pz = mode_ram.pz;
static volatile uint8_t &press_head = mode_ram.btn.q_head;
static uint8_t &press_tail = mode_ram.btn.q_tail;
static uint8_t &btn_last = mode_ram.btn.last;
static uint8_t &btn_pressed_once = mode_ram.btn.pressed_once;

/* A wait on the serial line this long (a reply behind a full outbox) may
 * have let the sampling handler go round its FIFO, even more than once
 * (its head is an entry, which fifo_catch_up() reads): less than FIFO_N
 * sample periods, with room for the scan it ends. */
#ifndef FIFO_SAFE_US
#define FIFO_SAFE_US ((uint16_t)((FIFO_N - 2u * PADBOX_PADS) * SAMPLE_TICKS / 2u))
#endif
/** After a wait on the serial line that began at device time started: the
 * sampler starts afresh at the scan's end if it may have gone round. */
static void waited_since(uint32_t started) {
    if (!button_mode && clock_us() - started > FIFO_SAFE_US) pz.restart = 1;
}
static void fifo_catch_up(void);
/** While waiting on the serial line: the time above assumes the loop was
 * not behind when the wait began, and the head cannot show a lap (since
 * 2.18.0: a byte's count of 256; since 2.29.0 an entry). So each turn of a wait also looks at
 * the fill, and a handler within a scan of going round has the sampler
 * start afresh at the scan's end (a turn is shorter than a UART byte, 40
 * us; eight samples take 148). */
static inline void fifo_watch(void) {
    if (!button_mode) fifo_catch_up();
}

/* ------------------------------------------------------------- sending */

/* HIT and HB lines, and the reply to CFG, are built a few fields at a time,
 * one step per scan, so a line never stalls sampling for more than a few
 * tens of microseconds. Other lines (short replies, HELLO, LVL) are rare
 * and built at once, after finishing any line in progress so sequence
 * numbers stay in order. */
enum { REC_HIT = 1, REC_HB };
typedef struct { /* (5 bytes: the fields share a word) */
    uint16_t peak : 10;
    uint16_t slap : 1;
    uint16_t pad : 3;
    uint16_t kind : 2;
    __uint24 t_lo; /* the time's low 24 bits (16.7 s): rec_age() against the clock finds the rest (since 2.30.0) */
} rec_t;
#define RECQ_MASK 15u /* 16 records: a table's worth of hits and a heartbeat */
static rec_t recq[RECQ_MASK + 1u];
static uint8_t rec_head, rec_tail;
/** Half the outbox's records or more are waiting. */
static uint8_t outbox_half_full(void) { return (uint8_t)((rec_head - rec_tail) & RECQ_MASK) >= (RECQ_MASK + 1u) / 2u; }
/** How long ago (device time now) a record's time was, within 2^23 us
 * either way: a record leaves within a second of its time. */
static int32_t rec_age(uint32_t now, const rec_t *r) {
    __int24 d = (__int24)((__uint24)now - r->t_lo);
    return (int32_t)d;
}
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
    case 1: {
        uint32_t now = clock_us(); /* (after the record's time: its age is positive) */
        fmt_part = proto_add_u32_top(&fmt, now - (uint32_t)rec_age(now, r));
        fmt_step = STEP_TIME_REST;
        break;
    }
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

/* A line in hand, a record waiting or a CFG reply to build: the outbox has
 * a step to take. (A macro: as a function it moved scan_end()'s code, and
 * with it the image's timing in bursts, from what the bench measured.) */
#define OUTBOX_BUSY() (fmt_step || rec_head != rec_tail || cfg_next != 0xFF)

static void outbox_flush(void) {
    uint32_t started = 0; /* (the clock read only if there is a wait) */
    while (OUTBOX_BUSY()) {
        if (!started) started = clock_us() | 1u;
        tx_service(); /* a line waiting for room gets it */
        outbox_step();
        fifo_watch();
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
    r->t_lo = (__uint24)t_us;
    rec_head = (uint8_t)((rec_head + 1) & RECQ_MASK);
}

/** Copy a finished line to the UART queue, waiting for room as it goes
 * (while keeping the UART busy): a line may be longer than the queue. */
static void queue_line(const proto_line_t *l) {
    uint32_t started = 0; /* (the clock read only if there is a wait) */
    for (uint8_t i = 0; i < l->len; i++) {
        if (!tx_free()) {
            if (!started) started = clock_us() | 1u;
            while (!tx_free()) {
                tx_service();
                fifo_watch();
            }
        }
        txq[tx_head] = (uint8_t)l->buf[i];
        tx_head = (uint8_t)((tx_head + 1u) & TXQ_MASK);
    }
    if (started) waited_since(started);
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

RARELY_RUN static void send_hello(void) {
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
    /* Levels are the one thing worth dropping when the link is busy: half
     * the outbox's records or more waiting (a burst of hits, ~10 ms of the
     * line; since 2.30.0: before, the UART queue over half full once they
     * were queued, which its 32 bytes are after a single HIT line). The
     * sequence number is used up anyway, so the host sees the gap; the
     * peaks carry on to the next LVL. */
    if (outbox_half_full()) {
        seq++;
        return;
    }
    proto_line_t &l = *line_now(PSTR("LVL"));
    proto_add_u32(&l, clock_us());
    proto_add_hex3_of(&l, lvl_latest, npads);
    proto_add_hex3(&l, lvl_peak, npads);
    for (uint8_t i = 0; i < npads; i++) lvl_peak[i] = lvl_latest(i);
    send_now(); /* (longer than the UART queue: queue_line() waits for the rest as it goes) */
}

RARELY_RUN static void send_ok(const proto_cmd_t *cmd) {
    proto_line_t &l = *line_now(PSTR("OK"));
    proto_add_cmd_echo(&l, cmd);
    send_now();
}

/** ERR, and the command it answers (PROTO_CMD_NONE: "-"). */
RARELY_RUN static void send_err(uint8_t err, uint8_t kind) {
    proto_line_t &l = *line_now(PSTR("ERR"));
    proto_add_rom_str(&l, proto_err_name(err));
    proto_add_rom_str(&l, proto_cmd_name(kind));
    send_now();
}

/* -------------------------------------------------------------- EEPROM */

/* Layout: 'P' 'B' layout npads, 16 bytes a pad (slap, touch, scan: 2 each,
 * xtalk, spare, mask, xwin: 4 each, little-endian), CRC-16 of all before. */
RARELY_RUN static uint8_t image_byte(uint16_t i) {
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

RARELY_RUN static uint16_t image_crc(void) {
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
RARELY_RUN static void save_service(void) {
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

/** The settings saved in the EEPROM, if it holds a sound image of them. Run
 * before either mode's use of mode_ram: the image is read into it. */
__attribute__((noinline)) RARELY_RUN static void settings_load(void) {
    uint8_t *raw = (uint8_t *)&mode_ram; /* (the sampler has not started: its RAM, not 134 bytes of stack) */
    static_assert(sizeof mode_ram >= EEPROM_SIZE, "settings_load(): the EEPROM's image fits mode_ram");
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

RARELY_RUN static void set_param(const proto_cmd_t *cmd) {
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

__attribute__((noinline)) RARELY_RUN static void handle_line(const char *line, uint8_t len) {
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
    ADMUX = _BV(REFS0) | _BV(ADLAR);  /* AVCC reference, left adjusted (ADCH: 8 bits), channel 0 */
    ADCSRB = 0;                       /* single conversions, started by us */
    DIDR0 = 0x3F;                     /* A0..A5: no digital input buffer (less noise) */
    ADCSRA = _BV(ADEN) | _BV(ADPS2);  /* enable, prescaler 16: 1 MHz ADC clock */
}

/* Enabled, prescaler 16 (1 MHz ADC clock); with ADSC: start a conversion.
 * Written whole (no read-modify-write): nothing else in ADCSRA is used. */
#define ADCSRA_ON (_BV(ADEN) | _BV(ADPS2))
#define ADC_MUX(ch) ((uint8_t)(_BV(REFS0) | _BV(ADLAR) | (ch)))

/* Sampling. Timer2 counts the same 0.5 us ticks as Timer1 and interrupts
 * every SAMPLE_TICKS of them (18.5 us, CTC mode): the handler takes the
 * conversion that ended meanwhile, starts the next pad's at once and puts
 * the result in a FIFO. So each pad is sampled exactly every PADBOX_PADS x
 * 18.5 us (148 us with 8 pads), whatever detection or the serial line is
 * doing (while the loop keeps up: see "Pacing" below). The main loop
 * takes the samples from the FIFO in order and catches up: a contact's
 * start, its walk back or a decision that costs a few sample periods only
 * fills the FIFO a little. No time is stored with a sample: each
 * conversion starts one period after the one before (SAMPLE_TICKS, or the
 * paced period from a scan's start on), on the same crystal and prescale
 * as the clock, at the handler's fixed latency, so the loop counts the
 * times on (pz.step, pz.step_xor: whole microseconds a sample, the half
 * microseconds alternating). */
/* Samples were written over (fill: how far the handler's head is ahead
 * of the loop, fifo_fill()). The head is an entry, so a lap cannot be
 * seen in it: the loop takes a handler within a scan of the loop's tail
 * as gone round (the pacing keeps it far from there); within two with
 * PACE_EVERY 2, where a pace set for the odd scan after the next is in
 * scan_ocr's entry that the loop reads at the same scan of the lap
 * before: a loop that far behind restarts the sampler at that scan's
 * end, so the entry never dates a sample. */
#define FIFO_OVER(fill) ((fill) >= FIFO_N - PACE_EVERY * PADBOX_PADS)
/* A scan's end reads the head again after its chores only from this fill
 * on (since 2.33.0): the chores take a few samples' time at most, far
 * less than the way from here to FIFO_OVER. */
#define FIFO_RECHECK (FIFO_N - 4u * PADBOX_PADS - 32u)
/* From the Timer1 tick the sampler starts on (sampler_start) to the
 * sample-and-hold of the first match's conversion, in Timer1 ticks beyond
 * SAMPLE_TICKS, as the counted times take it: the match, the interrupt's
 * response and the handler's first instructions (15 cycles of them: the
 * conversion starts 2-3 cycles into a half microsecond, so the latency's few
 * cycles of jitter stay within it; and so do the sampler start's: its
 * poll of Timer1's flag sees it 1 to 3 cycles after the tick, as the
 * build's code before it falls, so a build's sample-and-holds are up to
 * two cycles off another's). Checked in the simulator against its
 * log of conversion starts: tests/firmware/test_firmware_sim.py replays
 * that log through the detection core on the host and gets the image's
 * onsets. */
#ifndef SAMPLE_DELAY_TICKS
#if PADBOX_SAMPLER_REGS
#define SAMPLE_DELAY_TICKS 4u
#else
#define SAMPLE_DELAY_TICKS 5u /* (the handler that stacks its registers starts the conversion 10 cycles later) */
#endif
#endif
/* Times the sampler started afresh because the FIFO overflowed (a long
 * wait on the serial line), saturating at 255: GPIOR1, which the simulator
 * harness reports. */
#define SAMPLER_RESTARTS GPIOR1
/* The FIFO's fill at the end of the fullest scan (the harness reports it too). */
#define FIFO_PEAK GPIOR2

/* The handler's state: the FIFO's head, the address of the entry it
 * writes next (in r5:r7 with PADBOX_SAMPLER_REGS, the Makefiles' build: see
 * below), and the next conversion's ADMUX in GPIOR0 (in and out, one cycle
 * each). */
#define NEXT_MUX GPIOR0
static volatile uint8_t ocr_next = SAMPLE_TICKS - 1u; /* OCR2A from the next scan's start on (pace()) */
/* The periods the handler takes at scans' starts, for the loop to count the
 * times on with (pace(), scan_end()): OCR2A from scan k (its first sample
 * entry k x PADBOX_PADS) at k / PACE_EVERY, 0 for no change. */
static uint8_t scan_ocr[FIFO_SCANS / PACE_EVERY];
#define FIFO_END (&mode_ram.pz.fifo[FIFO_N])
/** The entry (0 .. FIFO_N - 1) at a FIFO address, as the head holds it. */
static inline uint16_t fifo_entry(uint16_t at) __attribute__((always_inline));
static inline uint16_t fifo_entry(uint16_t at) { return (uint16_t)(at - (uint16_t)&mode_ram.pz.fifo[0]); }
#if PADBOX_SAMPLER_REGS
/** The entry the handler writes next (0 .. FIFO_N - 1). Its address's
 * high byte is read again after the low one, and the pair again if the
 * handler moved it meanwhile. */
static inline uint16_t fifo_head_now(void) __attribute__((always_inline));
static inline uint16_t fifo_head_now(void) {
    uint16_t h;
    asm volatile("1:\n\t"
                 "mov %B0, r5\n\t"
                 "mov %A0, r7\n\t"
                 "cp %B0, r5\n\t"
                 "brne 1b"
                 : "=&r"(h)); /* (read anew each time: the handler moves it) */
    return fifo_entry(h);
}
/** The head's address, interrupts off (pace_to(): as few cycles as can be). */
static inline uint16_t fifo_head_held(void) __attribute__((always_inline));
static inline uint16_t fifo_head_held(void) {
    uint16_t h;
    asm volatile("mov %A0, r7\n\tmov %B0, r5" : "=r"(h));
    return h;
}
#define FIFO_HEAD_CLEAR() asm volatile("mov r7, %A0\n\tmov r5, %B0" ::"r"(&mode_ram.pz.fifo[0]))
#else
static volatile uint8_t *volatile fifo_head; /* the entry the handler writes next */
static inline uint16_t fifo_head_now(void) __attribute__((always_inline));
static inline uint16_t fifo_head_now(void) {
    /* (read twice, until both agree, not with interrupts off: a handler
     * held back a few cycles would take its sample-and-hold in the next
     * half microsecond) */
    const volatile uint8_t *h, *again;
    do {
        h = fifo_head;
        again = fifo_head;
    } while (h != again);
    return fifo_entry((uint16_t)h);
}
static inline uint16_t fifo_head_held(void) __attribute__((always_inline));
static inline uint16_t fifo_head_held(void) { return (uint16_t)fifo_head; }
#define FIFO_HEAD_CLEAR() (fifo_head = &mode_ram.pz.fifo[0])
#endif
/** Samples from entry from to entry to, going on round the FIFO (0 ..
 * FIFO_N - 1): how far the handler's head is ahead of the loop. */
static inline uint16_t fifo_fill(uint16_t from, uint16_t to) __attribute__((always_inline));
static inline uint16_t fifo_fill(uint16_t from, uint16_t to) {
    uint16_t n = (uint16_t)(to - from);
    return (int16_t)n < 0 ? (uint16_t)(n + FIFO_N) : n;
}
/** The entry n samples after entry at (n at most FIFO_N). */
static inline uint16_t fifo_after(uint16_t at, uint16_t n) __attribute__((always_inline));
static inline uint16_t fifo_after(uint16_t at, uint16_t n) {
    at = (uint16_t)(at + n);
    return at >= FIFO_N ? (uint16_t)(at - FIFO_N) : at;
}
/* Pacing: a loop more than FIFO_SLOW samples behind at the end of a scan
 * before an odd one (every other scan's end, since 2.33.0) slows
 * the sampling down (scan_end(): pace()): the periods to come are
 * PACE_TICKS ticks longer for every sample beyond it, and PACE_FAST_TICKS
 * more for every sample beyond FIFO_FAST, up to 126 ticks (63 us; a brake
 * beyond FIFO_BRAKE: up to 100 us), so that
 * a burst of heavy work too long for the FIFO slows the sampling just as
 * much as it needs, evenly, for as long as it lasts, and no sample is
 * lost. The handler takes the loop's OCR2A (ocr_next) when it starts pad
 * 1's conversion, so the period changes at a scan's start, and the loop
 * counts the times of the scans from there at the new period (scan_ocr).
 * The bench's bursts still need it, in most files for a few milliseconds
 * a round (firmware/README.md, "What is not there yet").
 * Early and gently (from 64 samples, 0.5 us a sample; 2.2.0: from 96,
 * 2 us a sample), with a steeper part near the FIFO's end that keeps it
 * from overflowing (from 108 samples since 2.5.0: from 112, with 2.5.0's
 * heavier decisions, one burst of the off-model bench's fast tops filled
 * the FIFO to 129; from 104 the sampler slowed earlier and the bench made
 * more false slaps): the sampler slows a little for longer instead of much
 * for a short while, and the bench's three seeds had about a third fewer
 * false slaps and the FIFO's fullest at 120-122 samples instead of up to 132
 * (firmware/README.md, "Pacing"). */
/* (Since 2.29.0 the margins to the FIFO's end are as many samples as
 * they were tuned on a FIFO of 256, 80, 48 and 40: a deeper FIFO adds its
 * extra before the pacing starts. A shallower one keeps the fractions.) */
#define FIFO_MARGIN(m, num, den) (FIFO_N >= 256u ? FIFO_N - (m) : FIFO_N * (num) / (den))
#ifndef FIFO_SLOW
#define FIFO_SLOW FIFO_MARGIN(80u, 11u, 16u)
#endif
#ifndef PACE_TICKS
#define PACE_TICKS 1u /* ticks (0.5 us) longer a sample beyond FIFO_SLOW */
#endif
#ifndef FIFO_FAST
#define FIFO_FAST FIFO_MARGIN(48u, 13u, 16u)
#endif
#ifndef PACE_FAST_TICKS
#define PACE_FAST_TICKS 4u /* ticks more a sample beyond FIFO_FAST */
#endif
#define EXTRA_TICKS_MAX 126u /* 63 us at most ... */
/* ... but near the FIFO's end, a brake (since 2.8.0): from 126 ticks, 24
 * more (12 us) a sample beyond FIFO_BRAKE, up to 200 ticks (100 us) three
 * samples later. A scan may hold three heavy steps (DETECT_WORK_PER_SCAN)
 * of up to ~6,000 cycles each: at 63 us a slot the FIFO can gain six
 * samples in that scan, and three bursts with 2.8.0's builds (two after a
 * warm-up, one off the model) ran out of it so, one with a brake from
 * 124. From 116 since 2.12.0 (120 before): step 16 starts a few more
 * contacts in a burst, and with a brake from 120 one burst of the
 * off-model bench's close pads filled the FIFO to 129 (of 806 files,
 * none from 116: the fullest 126). A scan's heavy steps, up to ~10,000
 * cycles each, took it past the end still, once in 24 runs of the bench
 * (a build of step 21 on 2.14.0): since 2.15.0 the pace is also set
 * before each heavy step near the FIFO's end (detect_work_taken() below),
 * and since 2.16.0 as the heaviest goes on (detect_work_goes_on()).
 * (OCR2A: 36 + 200 < 256.) */
#ifndef FIFO_BRAKE
#define FIFO_BRAKE FIFO_MARGIN(40u, 27u, 32u)
#endif
/* Heavy work waits from here while the brake is not in (since 2.34.0;
 * detect_work_taken() below). */
#ifndef FIFO_HOLD
#define FIFO_HOLD FIFO_MARGIN(32u, 15u, 16u)
#endif
#define PACE_BRAKE_TICKS 24u
#define BRAKE_TICKS_MAX 200u

/* The handler in assembly. Built with PADBOX_SAMPLER_REGS (and
 * -ffixed-r2 .. -ffixed-r7 for every file: the Makefiles, plain and
 * arduino-mk), r2..r7 are its own: it saves Z with a movw and SREG in r6
 * and pushes nothing, ~35 cycles a sample with its call (avr-gcc's saved
 * eleven registers: ~75). tests/firmware/test_firmware_fastpath.py checks
 * that no other code in the images touches them (libgcc and avr-libc
 * included). The Arduino IDE passes no such flags: its build gets the
 * same handler saving what it uses on the stack, ~20 cycles more.
 *
 *   r2:r3  Z, saved while the handler uses it
 *   r4     the conversion just read (its 8 high bits)
 *   r6     SREG, saved
 *   r5:r7  the FIFO's head: the address of the entry it writes next
 *
 * Only lds, rjmp, sts, movw, push, in and ldi come before the conversion starts
 * (they leave SREG alone), so the sample-and-hold is a fixed number of
 * cycles after the match, the same in both (SAMPLE_DELAY_TICKS). */
#if (PADBOX_PADS & (PADBOX_PADS - 1u)) == 0
#define ISR_NEXT_MUX "andi r30, %[mux_wrap]\n\t" /* (a power of two: pad 1 after the last by a mask) */
#else
#define ISR_NEXT_MUX "cpi r30, %[mux_end]\n\tbrne 1f\n\tldi r30, %[mux_first]\n1:\n\t"
#endif
/* Only at an odd scan's start (PACE_EVERY 2) is ocr_next taken: the entry
 * stored now (its address's low byte in reg, then in r31) is the one
 * before the scan's first, 8k - 1 for scan k with 8 pads, whose bit 3 is
 * clear for odd k (and set for scan 0 after the FIFO's last entry: its
 * scans are even in number). Two cycles more a scan: r31 is free here. */
#if PACE_EVERY == 2
#define ISR_PACE_SCAN(reg)                                                                                   \
    "mov r31, " reg "\n\t"                                                                                   \
    "subi r31, lo8(%[fifo])\n\t"                                                                           \
    "sbrc r31, %[pace_bit]\n\t"                                                                            \
    "rjmp 2f\n\t"
#else
#define ISR_PACE_SCAN(reg) ""
#endif
/* Z past the entry just stored (st Z+): back to the FIFO's start at its end. */
#define ISR_FIFO_WRAP                                                                                        \
    "cpi r30, lo8(%[fifo_end])\n\t"                                                                          \
    "brne 3f\n\t"                                                                                           \
    "cpi r31, hi8(%[fifo_end])\n\t"                                                                          \
    "brne 3f\n\t"                                                                                           \
    "ldi r30, lo8(%[fifo])\n\t"                                                                              \
    "ldi r31, hi8(%[fifo])\n"                                                                                 \
    "3:\n\t"
#define ISR_OPERANDS                                                                                          \
    [adcl] "n"(_SFR_MEM_ADDR(ADCL)), [adch] "n"(_SFR_MEM_ADDR(ADCH)), [admux] "n"(_SFR_MEM_ADDR(ADMUX)),       \
        [adcsra] "n"(_SFR_MEM_ADDR(ADCSRA)), [start] "M"(ADCSRA_ON | _BV(ADSC)),                               \
        [mux] "I"(_SFR_IO_ADDR(NEXT_MUX)), [mux_end] "M"(ADC_MUX(PADBOX_PADS)), [mux_first] "M"(ADC_MUX(0)),     \
        [mux_wrap] "M"(ADC_MUX(PADBOX_PADS - 1u)), [fifo] "i"(&mode_ram.pz.fifo[0]),                            \
        [fifo_end] "i"(FIFO_END), [mux_second] "M"(ADC_MUX(PADBOX_PADS > 1 ? 1 : 0)),              \
        [ocr] "n"(_SFR_MEM_ADDR(OCR2A)), [ocr_next] "i"(&ocr_next), [pace_bit] "I"(PACE_BIT)
#if PADBOX_SAMPLER_REGS
ISR(TIMER2_COMPA_vect, ISR_NAKED) {
    asm volatile(
        /* ADCH: the 8 high bits of the channel still in ADMUX (left
         * adjusted, ADCH alone may be read); then two cycles, so the next
         * sample-and-hold is where the 10-bit read had it
         * (SAMPLE_DELAY_TICKS) */
        "lds r4, %[adch]\n\t"
        "rjmp .+0\n\t"
        "movw r2, r30\n\t"
        "in r6, __SREG__\n\t"
        "in r30, %[mux]\n\t"
        "sts %[admux], r30\n\t"
        /* the ADMUX after it: the next pad, pad 1 after the last */
        "inc r30\n\t"
        ISR_NEXT_MUX
        "ldi r31, %[start]\n\t"
        "nop\n\t" /* (one cycle: the sample-and-hold 2-3 cycles into a half microsecond, see SAMPLE_DELAY_TICKS) */
        "sts %[adcsra], r31\n\t" /* the next pad's sample-and-hold: 15 cycles in */
        "out %[mux], r30\n\t"
        /* pad 1's conversion started: the period after it, and the scan's,
         * the loop's choice (at an odd scan only: ISR_PACE_SCAN) */
        "cpi r30, %[mux_second]\n\t"
        "brne 2f\n\t"
        ISR_PACE_SCAN("r7")
        "lds r31, %[ocr_next]\n\t"
        "sts %[ocr], r31\n"
        "2:\n\t"
        /* into the FIFO at its head, the head one on (round at the end) */
        "mov r30, r7\n\t"
        "mov r31, r5\n\t"
        "st Z+, r4\n\t"
        ISR_FIFO_WRAP
        "mov r7, r30\n\t"
        "mov r5, r31\n\t"
        "movw r30, r2\n\t"
        "out __SREG__, r6\n\t"
        "reti\n\t" ::ISR_OPERANDS);
}
#else
ISR(TIMER2_COMPA_vect, ISR_NAKED) {
    asm volatile(
        "push r24\n\t"
        "push r25\n\t"
        "lds r24, %[adch]\n\t" /* (as above) */
        "rjmp .+0\n\t"
        "push r30\n\t"
        "push r31\n\t"
        "in r31, __SREG__\n\t"
        "push r31\n\t"
        "in r30, %[mux]\n\t"
        "sts %[admux], r30\n\t"
        "ldi r31, %[start]\n\t"
        /* three cycles, so the sample-and-hold falls 2-3 cycles into a half
         * microsecond, not on its edge: at 21 cycles, as 2.28.0 had it, one
         * build's start (see SAMPLE_DELAY_TICKS) put it a cycle before the
         * edge, half a microsecond before its counted time */
        "rjmp .+0\n\t"
        "nop\n\t"
        "sts %[adcsra], r31\n\t" /* the next pad's sample-and-hold: 24 cycles in */
        "inc r30\n\t"
        ISR_NEXT_MUX
        "out %[mux], r30\n\t"
        "cpi r30, %[mux_second]\n\t"
        "brne 2f\n\t"
        "lds r31, %[head]\n\t"
        ISR_PACE_SCAN("r31")
        "lds r31, %[ocr_next]\n\t"
        "sts %[ocr], r31\n"
        "2:\n\t"
        "lds r30, %[head]\n\t"
        "lds r31, %[head]+1\n\t"
        "st Z+, r24\n\t"
        ISR_FIFO_WRAP
        "sts %[head], r30\n\t"
        "sts %[head]+1, r31\n\t"
        "pop r31\n\t"
        "out __SREG__, r31\n\t"
        "pop r31\n\t"
        "pop r30\n\t"
        "pop r25\n\t"
        "pop r24\n\t"
        "reti\n\t" ::ISR_OPERANDS,
        [head] "i"(&fifo_head));
}
#endif

/** The loop's steps from pz.frac and pz.period: the whole microseconds
 * from sample pz.tail to the next, and how the next one differs (odd
 * periods: the half microseconds alternate); and detect_slow. */
static void set_steps(void) {
    uint8_t p = pz.period;
    pz.step = (uint8_t)((p + pz.frac) >> 1);
    pz.step_xor = (p & 1u) ? (uint8_t)((p >> 1) ^ ((p >> 1) + 1u)) : 0u;
    /* (and how slow the scans are from here, for the ringing's decay: detect.h, step 16; a scan is
     * PADBOX_PADS periods of p half microseconds) */
    detect_slow = detect_slowness((uint16_t)((uint16_t)PADBOX_PADS * p / 2u));
}

/** Start the sampler; the loop's first sample is pad 1's (pz.tail, pz.t_us). */
RARELY_RUN static void sampler_start(void) {
    cli();
    TCCR2A = _BV(WGM21); /* CTC: the count restarts after OCR2A */
    TCCR2B = 0;
    OCR2A = SAMPLE_TICKS - 1u;
    TCNT2 = 0;
    TIFR2 = _BV(OCF2A);
    TIMSK2 = _BV(OCIE2A);
    /* On a Timer1 tick (its compare B flag, two ticks on, polled in three
     * cycles): Timer2's ticks then fall where Timer1's do, and the
     * sample-and-hold at the same place in the microsecond in every
     * build, whatever the code before took (in the simulator Timer2 counts
     * from its start; on the chip its prescaler, reset here, too). */
    uint16_t lo = (uint16_t)(TCNT1 + 3u); /* (the tick to start on, a little ahead) */
    OCR1B = lo;
    TIFR1 = _BV(OCF1B);
    asm volatile(
        "1:\n\t"
        "sbis %[tifr1], %[ocf1b]\n\t"
        "rjmp 1b\n\t"
        "nop\n\t" /* (the sample-and-hold a little into the half microsecond: see SAMPLE_DELAY_TICKS) */
        "sts %[gtccr], %[psr]\n\t"
        "sts %[tccr2b], %[cs]\n\t" /* clk/8, as Timer1: the first match SAMPLE_TICKS from now */
        ::[tifr1] "I"(_SFR_IO_ADDR(TIFR1)), [ocf1b] "I"(OCF1B), [gtccr] "n"(_SFR_MEM_ADDR(GTCCR)),
        [psr] "r"((uint8_t)_BV(PSRASY)), [tccr2b] "n"(_SFR_MEM_ADDR(TCCR2B)), [cs] "r"((uint8_t)_BV(CS21)));
    uint32_t base = t1_base_us; /* (clock_read()'s: an overflow not yet serviced, and the count after it) */
    if ((TIFR1 & _BV(TOV1)) && lo < 0x8000u) base += 32768u;
    /* Pad 1's first conversion by hand, about a sample period before the
     * first match's (it is learnt from, never judged): entry 0. Entry n is
     * then the conversion match n started, entry 1 at lo + SAMPLE_TICKS +
     * SAMPLE_DELAY_TICKS. */
    ADMUX = ADC_MUX(0);
    ADCSRA = ADCSRA_ON | _BV(ADSC);
    NEXT_MUX = ADC_MUX(PADBOX_PADS > 1 ? 1 : 0);
    FIFO_HEAD_CLEAR(); /* (interrupts are off) */
    pz.tail = 0;
    pz.restart = 0;
    uint32_t ticks = (uint32_t)lo + SAMPLE_DELAY_TICKS; /* entry 0's, after base (an even tick) */
    pz.t_us = base + (ticks >> 1);
    pz.frac = (uint8_t)(ticks & 1u);
    pz.period = SAMPLE_TICKS;
    ocr_next = SAMPLE_TICKS - 1u;
    memset(scan_ocr, 0, sizeof scan_ocr);
    set_steps();
    sei();
}

/** A sample's full time from the low 16 bits of it, during the scan
 * whose first sample is at pz.t_us (a scan is far shorter than 65 ms). */
static inline uint32_t time_of(uint16_t t_lo) __attribute__((always_inline));
static inline uint32_t time_of(uint16_t t_lo) {
    return pz.t_us + (uint16_t)(t_lo - (uint16_t)pz.t_us);
}
/** After work that may have waited on the serial line: if the handler
 * has written over samples not yet taken, the scan ends on what is there
 * (newer samples of the same pads, FIFO_N being a multiple of the pads)
 * and the sampler starts afresh at its end (pz.restart). pz.tail: the
 * loop's next sample. */
static __attribute__((noinline)) void fifo_catch_up(void) {
    if (FIFO_OVER(fifo_fill(pz.tail, fifo_head_now()))) pz.restart = 1;
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

/* The scan loop (scan_pads(): in assembly with PADBOX_SAMPLER_REGS, else
 * in C, the same steps) takes each pad's sample from the FIFO, counts its
 * time on and gives it to detect_sample_quick(); what is rare it leaves to
 * these functions, and the rest of a scan's work to scan_end(). Each gets
 * the pad's slot k in the scan (its state s, its sample's time t_lo);
 * the scan's first sample is entry pz.row of the FIFO. */

/** The sample of slot k, as the FIFO holds it. */
static inline uint16_t slot_sample(uint8_t k) __attribute__((always_inline));
static inline uint16_t slot_sample(uint8_t k) {
    return detect_raw8(pz.fifo[pz.row + k]); /* (a scan's entries never go round) */
}

/** What a sample's fast path left (detect_step), at its full time. Out of
 * the scan loop: the 32-bit time is worked out only here. */
static __attribute__((noinline)) void sample_slow(detect_pad_state_t *s, uint8_t k, uint16_t t_lo) {
    detect_step(&det, s, k, slot_sample(k), time_of(t_lo));
}

/** A decision due on pad k at its sample of time t_lo (its state is
 * PENDING and the decision's time has come: detect_poll_at()'s checks),
 * and the hit sent if there is one. */
static __attribute__((noinline)) void poll_slow(const detect_pad_state_t *s, uint8_t k, uint16_t t_lo) {
    if (detect_poll_at(&det, s, k, time_of(t_lo), &pz.decided) && said_hello) {
        pz.tail = fifo_after(pz.row, (uint16_t)(k + 1u)); /* (the loop's place, for fifo_catch_up()) */
        send_decided();
    }
}

/* Pad k's level into LVL's peak: while streaming (calibration), a piezo
 * pad's deviation from its rest point (0 at rest), as thresholds and peaks
 * are; a button's 1023 pressed, each turn of button mode's loop. */
static __attribute__((noinline)) void stream_level(uint8_t k) {
    uint16_t lv = lvl_latest(k);
    if (lv > lvl_peak[k]) lvl_peak[k] = lv;
}

/** The loop ahead of the handler: wait for the scan in hand (its first
 * sample entry pz.row; all its samples), feeding the UART. */
static __attribute__((noinline)) void fifo_wait(void) {
    while (fifo_fill(pz.row, fifo_head_now()) < PADBOX_PADS) tx_service();
}

/** The sampling's pace from how far behind the loop is (fill: samples
 * waiting at a scan's end), for the handler to take at the next start of
 * a scan (a change it has not taken yet is changed again), and noted for
 * the loop at that scan (scan_ocr). */
static inline uint8_t pace_want(uint16_t fill) __attribute__((always_inline));
static inline uint8_t pace_want(uint16_t fill) {
    uint16_t over = fill > FIFO_SLOW ? (uint16_t)(fill - FIFO_SLOW) : 0u;
    uint16_t ticks = (uint16_t)(PACE_TICKS * over), most = EXTRA_TICKS_MAX;
    if (fill > FIFO_FAST) ticks = (uint16_t)(ticks + PACE_FAST_TICKS * (uint16_t)(fill - FIFO_FAST));
    if (fill > FIFO_BRAKE) {
        ticks = (uint16_t)(EXTRA_TICKS_MAX + PACE_BRAKE_TICKS * (uint16_t)(fill - FIFO_BRAKE));
        most = BRAKE_TICKS_MAX;
    }
    uint8_t extra = ticks > most ? (uint8_t)most : (uint8_t)ticks;
    return (uint8_t)(SAMPLE_TICKS - 1u + extra);
}
static inline void pace_to(uint8_t want) __attribute__((always_inline));
static inline void pace_to(uint8_t want) {
    if (want == ocr_next) return;
    cli(); /* (a few cycles: the sample-and-hold waits for them) */
    uint16_t at = fifo_head_held();
    ocr_next = want;
    sei();
    uint16_t h = fifo_entry(at);
    /* the conversion in flight is entry h's (the match that stores entry
     * h - 1 started it): the next match to start pad 1's, and the scan it
     * begins, is the next multiple of PADBOX_PADS; the handler takes the
     * pace at the next odd scan from there (PACE_EVERY 2) */
    uint8_t next = (uint8_t)(h / PADBOX_PADS + 1u);
    if (PACE_EVERY == 2u) next |= 1u;
    if (next >= FIFO_SCANS) next = (uint8_t)(next - FIFO_SCANS);
    scan_ocr[next / PACE_EVERY] = want;
}
static inline void pace(uint16_t fill) __attribute__((always_inline));
static inline void pace(uint16_t fill) { pace_to(pace_want(fill)); }

/** Detection is about to run a heavy step (detect.c's take_work(): a
 * contact's start, a look for a shake's source, a decision; up to ~10,000
 * cycles in a burst, and up to DETECT_WORK_PER_SCAN of them a scan). The
 * pace is set at a scan's end, so a scan of several heavy steps ran at
 * the pace of the last one's end however far behind the loop fell in it:
 * in the heaviest bursts the FIFO went from ~110 samples to past its end
 * in a few scans. So near the FIFO's end (past FIFO_FAST samples besides
 * the scan in hand), the sampler slows before each heavy step as much as
 * the scan's end would have it, never less (since 2.15.0). The detection
 * does not change: only the sample times, which the image stamps as it
 * takes them and the host's replay takes from the harness's log. */
uint8_t detect_work_taken(void) {
    uint16_t fill = fifo_fill(pz.tail, fifo_head_now());
    if (fill <= FIFO_FAST + PADBOX_PADS) return 1;
    uint8_t want = pace_want((uint16_t)(fill - PADBOX_PADS));
    if (want > ocr_next) pace_to(want);
    /* From FIFO_HOLD the unit waits while the sampler still runs quicker
     * than the brake (since 2.34.0): the pace asked for comes in only at
     * the next odd scan's start, up to 16 samples on, and a unit may take
     * ~10,000 cycles, 34 samples at the quiet pace. 2.33.0's loop went from
     * FIFO_SLOW past FIFO_OVER so, in a scan or two of heavy steps, in two
     * of the bench's 40 seed runs. Each wait is a scan or two; on the
     * bench's files, a quarter of them hold a unit back, ~2.5 times each
     * (firmware/README.md, "Heavy work waits for the brake near the FIFO's
     * end"). */
    return fill < FIFO_HOLD || OCR2A >= SAMPLE_TICKS - 1u + EXTRA_TICKS_MAX;
}
/** ... and as the heaviest goes on: a look for a shake's source among
 * seven clipped contacts is ~10,000 cycles in one unit, and in one of the
 * bench's bursts the FIFO went from 113 samples behind to its end within
 * one such unit (since 2.16.0: seed 4's table_112, 128 of 128 without,
 * 115 with). */
void detect_work_goes_on(void) { (void)detect_work_taken(); }

/* Heavy work a scan (det.work): DETECT_WORK_PER_SCAN units (a contact's
 * start, a look for a shake's source, a decision), as the host's copy of
 * the core runs (sim/hostrun.c): a burst's heavy work is spread over its
 * scans, and the image decides as the host does. */
#ifndef WORK_PER_SCAN
#define WORK_PER_SCAN DETECT_WORK_PER_SCAN
#endif

/* A draw of the sample timing (make DRAW=K; the bench's --draw K): K
 * cycles more at each scan's end and nothing else. The detection is the
 * same, but in a burst the sampler is paced a little differently, and so
 * every later sample of the burst falls elsewhere: the bench's counts move
 * by several percent with that alone (firmware/README.md, "Draws"). 0, the
 * released build: none. */
#ifndef PADBOX_DRAW_CYCLES
#define PADBOX_DRAW_CYCLES 0
#endif

enum { WORK_HB, WORK_RX, WORK_SAVE };
/** Work that may wait on the serial line, then the FIFO caught up. */
static __attribute__((noinline)) void slot_work(uint8_t what) {
    if (what == WORK_HB) send_hb_lvl(clock_us());
    else if (what == WORK_RX) rx_service();
    else save_service();
    fifo_catch_up();
}

/* While the loop is behind (a burst: every pad moving, the sampler about
 * to be slowed down, or slowed down already), the outbox waits (since
 * 2.9.0): building and queueing a HIT or HB line costs ~3,300 cycles over
 * its steps (and ~1,100 more to feed its bytes to the UART), more than a
 * quiet scan's 2,368, and in a burst's first milliseconds every cycle the
 * loop spends on it slows the sampler while contacts start. A line waits
 * until the loop has caught up to OUTBOX_WAIT_FILL samples or fewer, but
 * never once half the queue is full, nor once its record is
 * OUTBOX_WAIT_MAX_US old (a HIT's record is its onset: the host waits
 * 250 ms for a late hit by default, grace_ms), nor for a reply to CFG.
 * The work is the same; it comes later in the burst, when the contacts
 * have started. */
#ifndef OUTBOX_WAIT_FILL
#define OUTBOX_WAIT_FILL 48u
#endif
#ifndef OUTBOX_WAIT_MAX_US
#define OUTBOX_WAIT_MAX_US 30000
#endif
/* A line that may wait is looked at again this many scan_end() calls on
 * (since 2.33.0; every call before): a record may wait 30 ms, and a few
 * scans more or less change little, while the calls it saves let even
 * scans end quickly (scan_end_quick()). */
#ifndef OUTBOX_HOLD_CALLS
#define OUTBOX_HOLD_CALLS 3u
#endif
static uint8_t outbox_may_wait(uint16_t fill) {
    if (fill <= OUTBOX_WAIT_FILL || cfg_next != 0xFF || rec_head == rec_tail) return 0; /* (a CFG line in hand has cfg_next set) */
    if (outbox_half_full()) return 0;
    return rec_age(pz.t_us, &recq[rec_tail]) < (int32_t)OUTBOX_WAIT_MAX_US;
}

/** A scan's end: the next scan's first sample is entry tail (FIFO_N: 0),
 * at t_lo (its low 16 bits), with step whole microseconds to the sample after it. Its
 * place into pz, then the pace, the heavy work allowed, and
 * the scan's other work (the heartbeat and LVL, received commands, EEPROM
 * writes, a step of the outbox), each a few hundred cycles at most and
 * only when there is something to do. 1: the scans asked for are done. */
static __attribute__((noinline)) uint8_t scan_end(uint16_t t_lo, uint16_t tail, uint8_t step) {
#if PADBOX_DRAW_CYCLES > 0
    __builtin_avr_delay_cycles(PADBOX_DRAW_CYCLES);
#endif
    /* (while streaming, the scan's levels: no pad's state has changed since its sample) */
    if (streaming)
        for (uint8_t k = 0; k < PADBOX_PADS; k++) stream_level(k);
    pz.t_us = time_of(t_lo);
    if (tail == FIFO_N) tail = 0;
    pz.tail = tail;
    pz.step = step;
    uint8_t scan = (uint8_t)(tail / PADBOX_PADS), *ocr = &scan_ocr[scan / PACE_EVERY];
    if ((PACE_EVERY == 1u || (scan & 1u)) && *ocr) { /* the periods from this scan on: the handler's new one */
        uint8_t p = pz.period;
        if (p & 1u) pz.frac = (uint8_t)(step - (p >> 1)); /* (even periods: it stays) */
        pz.period = (uint8_t)(*ocr + 1u);
        *ocr = 0;
        set_steps();
    }
    uint16_t fill = fifo_fill(tail, fifo_head_now());
    if (fill > FIFO_PEAK) FIFO_PEAK = fill > 255u ? 255u : (uint8_t)fill; /* (a byte: 255 for fuller) */
    /* (the pace at every other scan only, as the handler takes it: half
     * the cycles in a burst, since 2.33.0) */
    if ((PACE_EVERY == 1u || (scan & 1u)) && (fill > FIFO_SLOW || ocr_next != SAMPLE_TICKS - 1u)) pace(fill);
    det.work = WORK_PER_SCAN;
    /* the heartbeat and LVL, and commands and EEPROM writes, take turns
     * (every fourth scan each in a burst, a few hundred microseconds late
     * at most); the outbox every call */
    if ((pz.scans ^= 1u) != 0) {
        if ((int32_t)(pz.t_us - next_hb) >= 0 || streaming) slot_work(WORK_HB);
    } else {
        if (rx_tail != rx_head) slot_work(WORK_RX);
        if (save_pos >= 0) slot_work(WORK_SAVE);
    }
    if (OUTBOX_BUSY()) {
        /* (a line held back in a burst is looked at again OUTBOX_HOLD_CALLS calls on, not at every one) */
        if (pz.outbox_hold) pz.outbox_hold--;
        else if (!outbox_may_wait(fill)) outbox_step(); /* never waits */
        else pz.outbox_hold = OUTBOX_HOLD_CALLS;
    }
    /* (the FIFO read again only if it was near its end, FIFO_RECHECK;
     * slot_work() looks itself) */
    if (pz.restart || (fill >= FIFO_RECHECK && FIFO_OVER(fifo_fill(pz.tail, fifo_head_now()))))
        sampler_restart();
    uint8_t done = pz.scans_left && --pz.scans_left == 0;
    /* (nothing for the next even scan's end but its place, scan_end_quick(),
     * unless a command came in meanwhile: it waits a scan more) */
    pz.quick = (uint8_t)(PACE_EVERY == 2u && !streaming && !pz.scans_left && save_pos < 0 && rx_tail == rx_head &&
                         (pz.outbox_hold || !OUTBOX_BUSY()));
    return done;
}

/** The end of a scan whose next one is even, when the scan_end() before
 * it left nothing for it to do (pz.quick: not streaming, no scans counted,
 * no EEPROM write nor command, the outbox idle or held back) and no
 * sample was written over: only the next scan's place into pz and the
 * heavy work allowed (since 2.33.0: in
 * a burst every other scan's end takes ~80 cycles, the loop's assembly's,
 * instead of ~320 with the call and the next scan's start; the pace, the
 * chores and the outbox wait for the next odd one). 1: done so; 0:
 * scan_end()'s. The scan loop's assembly does the same in its own. */
static inline uint8_t scan_end_quick(uint16_t t_lo, uint16_t tail, uint8_t step) __attribute__((always_inline));
static inline uint8_t scan_end_quick(uint16_t t_lo, uint16_t tail, uint8_t step) {
    if (PACE_EVERY != 2u || ((tail / PADBOX_PADS) & 1u) || !pz.quick || pz.restart) return 0;
    if (tail == FIFO_N) tail = 0;
    if (FIFO_OVER(fifo_fill(tail, fifo_head_now()))) return 0;
#if PADBOX_DRAW_CYCLES > 0
    __builtin_avr_delay_cycles(PADBOX_DRAW_CYCLES);
#endif
    pz.t_us = time_of(t_lo);
    pz.tail = tail;
    pz.step = step;
    det.work = WORK_PER_SCAN;
    return 1;
}

#ifndef PADBOX_SCAN_ASM
#define PADBOX_SCAN_ASM 1
#endif
#if PADBOX_SCAN_ASM && PADBOX_SAMPLER_REGS && FIFO_N % PADBOX_PADS == 0
#include "detect_asm.h"
/* The scan loop in assembly, the C one below step for step, with
 * detect_sample_quick() and detect_sample_ringing() inline (their text
 * from detect_asm.h: what the fastpath test checks). Its place in
 * registers of its own, kept across the calls: Y the scan's samples,
 * r16:r17 the pad's state, r14:r15 the sample's time, r12 the whole
 * microseconds to the next sample and r13 how the one after differs
 * (pz.step, pz.step_xor), r10 the slots left
 * (the slot is PADBOX_PADS - r10), r11 the scan's count (det.scan).
 * It waits for a scan's samples all together. (Numbered labels 10..59:
 * the pieces use 1..4, 60..79 and 89.) */
static __attribute__((naked, noinline)) void scan_loop(void) {
    asm volatile(
        "push r10\n\t" "push r11\n\t" "push r12\n\t" "push r13\n\t"
        "push r14\n\t" "push r15\n\t" "push r16\n\t" "push r17\n\t" "push r28\n\t" "push r29\n"
        "10:\n\t"
        /* a scan: its place from pz */
        "lds r28, %[p_tail]\n\t"
        "lds r29, %[p_tail]+1\n\t"
        "sts %[p_row], r28\n\t"
        "sts %[p_row]+1, r29\n\t"
        "lds r12, %[p_step]\n\t"
        "lds r13, %[p_xor]\n\t"
        "lds r14, %[p_t]\n\t"
        "lds r15, %[p_t]+1\n"
        "14:\n\t" /* (scan_end_quick()'s way in: those in their registers already) */
        "subi r28, lo8(-(%[fifo]))\n\t"
        "sbci r29, hi8(-(%[fifo]))\n\t"
        "ldi r16, lo8(%[st])\n\t"
        "ldi r17, hi8(%[st])\n\t"
        "ldi r24, %[pads]\n\t"
        "mov r10, r24\n\t"
        /* pad 1's sample: a new scan (detect_sample_at()) */
        "lds r24, %[d_scan]\n\t"
        "subi r24, 0xFF\n\t"
        "sts %[d_scan], r24\n\t"
        "mov r11, r24\n\t" /* (the scan's count in r11 for the scan: step 19 looks at its parity) */
        /* the scan's samples, all of them: waiting for the handler if the loop is ahead */
        "12:\n\t"
        "mov r25, r5\n\t"
        "mov r24, r7\n\t"
        "cp r25, r5\n\t"
        "brne 12b\n\t"
        "sub r24, r28\n\t"
        "sbc r25, r29\n\t"
        "brpl 13f\n\t"
        "subi r24, lo8(-(%[n]))\n\t"
        "sbci r25, hi8(-(%[n]))\n"
        "13:\n\t"
        "cpi r24, %[pads]\n\t"
        "cpc r25, __zero_reg__\n\t"
        "brsh 11f\n\t"
        "call %x[wait]\n"
        "11:\n\t"
        /* the sample: detect_raw8() */
        "ld r22, Y+\n\t"
        "clr r23\n\t"
        "lsl r22\n\t"
        "rol r23\n\t"
        "lsl r22\n\t"
        "rol r23\n\t"
        "ori r22, 2\n\t"
        "movw r20, r14\n\t"
        /* detect_sample_quick(): at rest the fast path, else ... */
        "movw r30, r16\n\t"
        "ldd r18, Z+%[state]\n\t"
        "cpse r18, __zero_reg__\n\t"
        "rjmp 59f\n\t"
        "movw r24, r16\n\t"
        "call detect_sample_fast\n\t"
        /* (at rest, or in a scan, after a sample done: no decision can be waiting) */
        "27:\n\t"
        "tst r24\n\t"
        "brne 26f\n\t"
        "rjmp 31f\n"
        "26:\n\t"
        "rjmp 32f\n"
        /* a moving pad: followed every other scan if it reported a contact
         * and rings in its mask (detect_skips(), step 19); a sample left
         * out goes into the history and the four-sums only */
        "59:\n\t"
        "cpi r18, %[ring]\n\t"
        "brne 56f\n\t"
        "sbrs r11, 0\n\t"
        "rjmp 56f\n\t"
        "ldd r19, Z+%[ref_shift]\n\t"
        "cpi r19, %[own]\n\t"
        "brne 56f\n\t"
        /* the sample's whole time less the mask's end, < 0: pz.t_us (the
         * scan's first sample's time) - mask_end_us + (t_lo - pz.t_us's low
         * 16 bits), in r18:r25:r24:r19 */
        "movw r26, r30\n\t"
        "subi r26, lo8(-(%[mask_end]))\n\t"
        "sbci r27, hi8(-(%[mask_end]))\n\t"
        "lds r19, %[p_t]\n\t"
        "ld r0, X+\n\t"
        "sub r19, r0\n\t"
        "lds r24, %[p_t]+1\n\t"
        "ld r0, X+\n\t"
        "sbc r24, r0\n\t"
        "lds r25, %[p_t]+2\n\t"
        "ld r0, X+\n\t"
        "sbc r25, r0\n\t"
        "lds r18, %[p_t]+3\n\t"
        "ld r0, X\n\t"
        "sbc r18, r0\n\t"
        "lds r26, %[p_t]\n\t"
        "lds r27, %[p_t]+1\n\t"
        "com r27\n\t"
        "neg r26\n\t"
        "sbci r27, 0xFF\n\t"
        "add r26, r14\n\t"
        "adc r27, r15\n\t"
        "add r19, r26\n\t"
        "adc r24, r27\n\t"
        "adc r25, __zero_reg__\n\t"
        "adc r18, __zero_reg__\n\t"
        "sbrc r18, 7\n\t"
        "rjmp 54f\n\t"
        "ldd r18, Z+%[state]\n"
        "56:\n\t"
        "rjmp 20f\n"
        "54:\n\t"
        ASM_MV_INTO_HIST_S4
        "rjmp 32f\n\t" ::
        [p_tail] "i"(&mode_ram.pz.tail), [p_row] "i"(&mode_ram.pz.row), [p_step] "i"(&mode_ram.pz.step),
        [p_xor] "i"(&mode_ram.pz.step_xor), [p_t] "i"(&mode_ram.pz.t_us),
        [n] "n"(FIFO_N), [fifo] "i"(&mode_ram.pz.fifo[0]), [st] "i"(&det.st[0]), [pads] "M"(PADBOX_PADS),
        [d_scan] "i"(&det.scan), [wait] "i"(fifo_wait), [state] "n"(offsetof(detect_pad_state_t, state)),
        [ring] "M"(DETECT_RING), [ref_shift] "n"(offsetof(detect_pad_state_t, ref_shift)), [own] "M"(DETECT_REF_SHIFT_OWN),
        [mask_end] "n"(offsetof(detect_pad_state_t, mask_end_us)), [s4] "n"(offsetof(detect_pad_state_t, s4)),
        ASM_PUSH_OPERANDS);
    /* (three statements: an asm takes 30 operands at most; nothing comes between them in a naked function) */
    asm volatile(
        /* a moving pad's tick (out of the way of the branch over it; s, raw
         * and t_lo stay in their registers) */
        "58:\n\t"
        ASM_TICK
        "rjmp 57f\n"
        "20:\n\t"
        ASM_QUICK_MOVING("rjmp 58b\n" "57:\n\t",
                         "movw r20, r14\n\t"
                         "call detect_sample_scan_pushed\n\t"
                         "rjmp 27b\n",
                         "rjmp 30f\n", "rjmp 31f\n") ::
        ASM_QUICK_OPERANDS);
    asm volatile(
        "31:\n\t"
        "movw r24, r16\n\t"
        "ldi r22, %[pads]\n\t"
        "sub r22, r10\n\t"
        "movw r20, r14\n\t"
        "call %x[slow]\n\t"
        "movw r30, r16\n"
        "30:\n\t"
        /* a decision due (detect_poll_at()'s checks; Z is still s) */
        "ldd r24, Z+%[state]\n\t"
        "cpi r24, %[pending]\n\t"
        "brne 32f\n\t"
        "ldd r24, Z+%[until]\n\t"
        "ldd r25, Z+%[until]+1\n\t"
        "movw r26, r14\n\t"
        "sub r26, r24\n\t"
        "sbc r27, r25\n\t"
        "brmi 32f\n\t"
        "movw r24, r16\n\t"
        "ldi r22, %[pads]\n\t"
        "sub r22, r10\n\t"
        "movw r20, r14\n\t"
        "call %x[poll]\n"
        "32:\n\t"
        /* the UART every other slot (a byte takes 40 us, a slot 18.5):
         * tx_service() inline, the transmitter's readiness first (since
         * 2.33.0: in a burst it is mostly busy with the byte before) */
        "sbrs r10, 0\n\t"
        "rjmp 34f\n\t"
        "lds r24, %[ucsr0a]\n\t"
        "sbrs r24, %[udre]\n\t"
        "rjmp 34f\n\t"
        "lds r25, %[tx_tail]\n\t"
        "lds r24, %[tx_head]\n\t"
        "cp r24, r25\n\t"
        "breq 34f\n\t"
        "mov r26, r25\n\t"
        "ldi r27, 0\n\t"
        "subi r26, lo8(-(%[txq]))\n\t"
        "sbci r27, hi8(-(%[txq]))\n\t"
        "ld r24, X\n\t"
        "sts %[udr0], r24\n\t"
        "inc r25\n\t"
        "andi r25, %[txmask]\n\t"
        "sts %[tx_tail], r25\n"
        "34:\n\t"
        /* the next sample's time: step us on (the half microseconds alternate) */
        "add r14, r12\n\t"
        "adc r15, __zero_reg__\n\t"
        "eor r12, r13\n\t"
        "subi r16, lo8(-(%[size]))\n\t"
        "sbci r17, hi8(-(%[size]))\n\t"
        "dec r10\n\t"
        "breq 35f\n\t"
        "rjmp 11b\n"
        "35:\n\t"
        /* the scan's end: the next one's first sample (tail) */
        "lds r22, %[p_row]\n\t"
        "lds r23, %[p_row]+1\n\t"
        "subi r22, lo8(-(%[pads]))\n\t"
        "sbci r23, hi8(-(%[pads]))\n\t"
#if PACE_EVERY == 2
        /* scan_end_quick(): an even scan next, pz.quick, no restart ... */
        "sbrc r22, %[pace_bit]\n\t"
        "rjmp 37f\n\t"
        "lds r24, %[p_quick]\n\t"
        "tst r24\n\t"
        "breq 37f\n\t"
        "lds r24, %[p_restart]\n\t"
        "tst r24\n\t"
        "brne 37f\n\t"
        "rjmp 38f\n"
        "37:\n\t"
#endif
        "movw r24, r14\n\t"
        "mov r20, r12\n\t"
        "call %x[end]\n\t"
        "tst r24\n\t"
        "brne 36f\n\t"
        "rjmp 10b\n"
        "36:\n\t"
        "pop r29\n\t" "pop r28\n\t" "pop r17\n\t" "pop r16\n\t" "pop r15\n\t" "pop r14\n\t"
        "pop r13\n\t" "pop r12\n\t" "pop r11\n\t" "pop r10\n\t"
        "ret\n\t"
#if PACE_EVERY == 2
        "\n38:\n\t" /* (scan_end_quick(), on) */
        /* ... tail round at the FIFO's end (r26:r27) ... */
        "movw r26, r22\n\t"
        "cpi r26, lo8(%[n])\n\t"
        "ldi r24, hi8(%[n])\n\t"
        "cpc r27, r24\n\t"
        "brne 1f\n\t"
        "clr r26\n\t"
        "clr r27\n"
        "1:\n\t"
        /* ... and nothing written over (FIFO_OVER) */
        "mov r25, r5\n\t"
        "mov r24, r7\n\t"
        "cp r25, r5\n\t"
        "brne 1b\n\t"
        "subi r24, lo8(%[fifo])\n\t"
        "sbci r25, hi8(%[fifo])\n\t"
        "sub r24, r26\n\t"
        "sbc r25, r27\n\t"
        "brpl 2f\n\t"
        "subi r24, lo8(-(%[n]))\n\t"
        "sbci r25, hi8(-(%[n]))\n"
        "2:\n\t"
        "cpi r24, lo8(%[over])\n\t"
        "ldi r18, hi8(%[over])\n\t"
        "cpc r25, r18\n\t"
        "brsh 37b\n\t"
#if PADBOX_DRAW_CYCLES > 0
        ".rept " DETECT_ASM_STR(PADBOX_DRAW_CYCLES) "\n\tnop\n\t.endr\n\t"
#endif
        /* pz.t_us on to t_lo (time_of()), the place, the heavy work allowed */
        "lds r18, %[p_t]\n\t"
        "lds r19, %[p_t]+1\n\t"
        "lds r20, %[p_t]+2\n\t"
        "lds r21, %[p_t]+3\n\t"
        "movw r24, r14\n\t"
        "sub r24, r18\n\t"
        "sbc r25, r19\n\t"
        "add r18, r24\n\t"
        "adc r19, r25\n\t"
        "adc r20, __zero_reg__\n\t"
        "adc r21, __zero_reg__\n\t"
        "sts %[p_t], r18\n\t"
        "sts %[p_t]+1, r19\n\t"
        "sts %[p_t]+2, r20\n\t"
        "sts %[p_t]+3, r21\n\t"
        "sts %[p_tail], r26\n\t"
        "sts %[p_tail]+1, r27\n\t"
        "sts %[p_step], r12\n\t"
        "ldi r24, %[work]\n\t"
        "sts %[d_work], r24\n\t"
        /* the next scan's place (label 10's) from here: its step (r12) and
         * time (r14:r15) are in their registers, and so is how the steps
         * change (r13: only scan_end() changes it) */
        "movw r28, r26\n\t"
        "sts %[p_row], r28\n\t"
        "sts %[p_row]+1, r29\n\t"
        "rjmp 14b\n"
#endif
 ::
        [slow] "i"(sample_slow), [state] "n"(offsetof(detect_pad_state_t, state)), [pending] "M"(DETECT_PENDING),
        [until] "n"(offsetof(detect_pad_state_t, until_lo)), [poll] "i"(poll_slow), [pads] "M"(PADBOX_PADS),
        [tx_head] "i"(&tx_head), [tx_tail] "i"(&tx_tail), [txq] "i"(&txq[0]), [txmask] "M"(TXQ_MASK),
        [ucsr0a] "n"(_SFR_MEM_ADDR(UCSR0A)), [udre] "I"(UDRE0), [udr0] "n"(_SFR_MEM_ADDR(UDR0)),
        [size] "n"(sizeof(detect_pad_state_t)), [end] "i"(scan_end), [p_row] "i"(&mode_ram.pz.row),
        [pace_bit] "I"(PACE_BIT), [p_quick] "i"(&mode_ram.pz.quick), [p_restart] "i"(&mode_ram.pz.restart),
        [n] "n"(FIFO_N), [fifo] "i"(&mode_ram.pz.fifo[0]), [over] "n"(FIFO_N - PACE_EVERY * PADBOX_PADS),
        [p_t] "i"(&mode_ram.pz.t_us), [p_tail] "i"(&mode_ram.pz.tail), [p_step] "i"(&mode_ram.pz.step),
        [work] "M"(WORK_PER_SCAN), [d_work] "i"(&det.work));
}
#define SCAN_ASM 1
#else
#define SCAN_ASM 0
#endif

#if !SCAN_ASM
/** One sample slot: take pad k's next sample from the FIFO (s: its state,
 * t_lo: its time; waiting for the handler if the loop is ahead) and
 * process it. The time of the next one into t_lo. */
static inline void scan_slot(uint8_t k, detect_pad_state_t *s, uint16_t &t_lo, uint8_t &step)
    __attribute__((always_inline));
static inline void scan_slot(uint8_t k, detect_pad_state_t *s, uint16_t &t_lo, uint8_t &step) {
    uint16_t v = detect_raw8(pz.fifo[pz.row + k]);
    const uint16_t t = t_lo;
    t_lo = (uint16_t)(t_lo + step); /* the next sample's (the half microseconds alternate) */
    step ^= pz.step_xor;
    /* (step 19; the sample's whole time: the scan's first sample's, pz.t_us, and on by its low 16 bits) */
    if (detect_skips(&det, s, pz.t_us + (uint16_t)(t - (uint16_t)pz.t_us))) detect_skip_sample(s, v, t);
    else if (!detect_sample_quick(s, v, t)) sample_slow(s, k, t);
    /* (detect_poll_at()'s checks, inline: the rest only when a decision is due) */
    if (s->state == DETECT_PENDING && (int16_t)(t - s->until_lo) >= 0) poll_slow(s, k, t);
    if (k & 1u) tx_service(); /* (every other slot: a byte takes 40 us, a slot 18.5) */
}
#endif

/** Scans of all pads from the FIFO: count of them, or forever (0). Starts
 * and ends at pad 1's sample (pz.tail). */
static void scan_pads(uint8_t count) {
    pz.scans_left = count;
    pz.quick = 0; /* (scan_end() counts the scans) */
    fifo_catch_up();
    if (pz.restart) sampler_restart();
#if SCAN_ASM
    scan_loop();
#else
    for (;;) {
        pz.row = pz.tail;
        uint8_t step = pz.step;
        uint16_t t_lo = (uint16_t)pz.t_us;
        det.scan++; /* (detect_sample_at(): pad 1's sample, a new scan) */
        if (fifo_fill(pz.row, fifo_head_now()) < PADBOX_PADS) fifo_wait(); /* (the scan's samples, all) */
        detect_pad_state_t *s = det.st; /* (one pointer walked, not an index) */
        for (uint8_t k = 0; k < PADBOX_PADS; k++, s++) scan_slot(k, s, t_lo, step);
        uint16_t tail = (uint16_t)(pz.row + PADBOX_PADS);
        if (!scan_end_quick(t_lo, tail, step) && scan_end(t_lo, tail, step)) break;
    }
#endif
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

/** Pad k's level now, for LVL: a button's, 1023 pressed; a piezo pad's,
 * its sample of the scan in hand (LVL is sent at a scan's end, where
 * stream_level() has just taken the same into its peak). */
static uint16_t lvl_latest(uint8_t k) {
    if (button_mode) return (buttons_read() & (1u << k)) ? 0u : 1023u;
    return detect_level(&det, k, slot_sample(k));
}

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

RARELY_RUN void setup(void) {
    cli();
    /* The Arduino core's millis interrupt (Timer0) off: unused here, and
     * each of its runs delays the sampling handler (no-op in the plain build). */
    TIMSK0 = 0;
    clock_init();
    uart_init();
    /* Mode jumper: D12 (PB4) to GND at reset selects button pads. */
    DDRB &= (uint8_t)~_BV(PB4);
    PORTB |= _BV(PB4);
    detect_init(&det, npads);
    settings_load();
    memset(&mode_ram, 0, sizeof mode_ram); /* (settings_load() read the EEPROM into it) */
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
    for (uint8_t p = 0; p < npads; p++) stream_level(p); /* (a pressed button's 1023 into LVL's peak) */
    tx_service();
    send_hb_lvl(clock_us());
    rx_service();
    save_service();
}
