/*
 * fastpath_avr.c - the detection core's paths in assembly (padbox/detect.c:
 * detect_sample_fast, detect_sample_scan, detect_sample_quick, whose moving
 * pad's part, the low-passed deviation and the ringing pad's path, is the
 * scan loop's inline text too, and detect_tick, ditto) against their C
 * versions, on the AVR itself: an image of its own, run in simavr by
 * tests/firmware/test_firmware_fastpath.py.
 *
 * Each round makes a random pad state (fields within the ranges the
 * detector keeps them in, and past them), feeds one random sample to both
 * versions, each on its own copy, and compares the return value and every
 * byte of the state after. Prints "FASTPATH <rounds> <failures>" on the
 * UART (250000 baud) and, for the first failures, which function and byte;
 * before it "COVER <branch> <rounds> ...": how often the low-passed
 * deviation's branches came up (the C version's), and the tick's, and the
 * fast path's faint shake.
 */
#include <avr/io.h>
#include <stddef.h>
#include <string.h>

#include "../padbox/detect.h"

uint8_t detect_sample_fast_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);
uint8_t detect_sample_scan_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);
uint8_t detect_sample_quick_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);
void detect_tick_c(detect_pad_state_t *s);

/* The paths compared, one a round in turn. */
enum { P_FAST, P_SCAN, P_QUICK, P_TICK, P_COUNT };
static const char *const NAMES[P_COUNT] = {"fast", "scan", "quick", "tick"};

#define ROUNDS 15000u

static uint16_t seed = 2026u; /* xorshift16: cheap on an 8-bit CPU */
static uint16_t rnd(void) {
    seed ^= (uint16_t)(seed << 7);
    seed ^= (uint16_t)(seed >> 9);
    seed ^= (uint16_t)(seed << 8);
    return seed;
}

static void put(char c) {
    while (!(UCSR0A & _BV(UDRE0))) {}
    UDR0 = (uint8_t)c;
}
static void put_str(const char *s) {
    while (*s) put(*s++);
}
static void put_u16(uint16_t v) {
    char buf[6];
    uint8_t n = 0;
    do {
        buf[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) put(buf[--n]);
}

/* A value near c: within +-spread, often right at the edges. */
static int16_t near(int16_t c, uint16_t spread) {
    return (int16_t)(c + (int16_t)(rnd() % (2u * spread + 1u)) - (int16_t)spread);
}

static void random_state(detect_pad_state_t *s, uint16_t raw) {
    uint8_t *p = (uint8_t *)s;
    for (uint8_t i = 0; i < sizeof *s; i++) p[i] = (uint8_t)rnd();
    s->state = (uint8_t)(rnd() % 4u);
    s->hist_at = (uint8_t)(rnd() & (DETECT_HIST - 1u));
    s->nf = (uint8_t)((rnd() & 7u) == 0 ? 248u + (rnd() & 7u) : rnd() % 24u);
    s->learn = (uint8_t)((rnd() & 7u) == 0 ? rnd() % 100u : 0u);
    s->ticked = (uint8_t)((rnd() & 1u) ? 0u : rnd() % 6u); /* (1 a tick's, +4 a push in the low-passed deviation) */
    s->tick = (uint8_t)((rnd() & 3u) ? 1u + rnd() % 4u : rnd());
    uint16_t g = (uint16_t)(s->nf + 4u);
    /* the rest near the sample (quiet), near the gate's edge, or anywhere */
    switch (rnd() % 4u) {
    case 0: s->base_q4 = near((int16_t)(raw << 4), 16u * g); break;
    case 1: s->base_q4 = near((int16_t)((raw - g) << 4), 40u); break;
    case 2: s->base_q4 = (int16_t)(rnd() % 16384u); break;
    default: s->base_q4 = (rnd() & 15u) ? near((int16_t)(raw << 4), 4000u) : -1; break;
    }
    /* (the tracker keeps the slope within +-2048: past +-3640, 9 x slope overflows an int in C) */
    s->slope_q8 = near(0, 2100u);
    s->thr = (uint16_t)(rnd() % 300u);
    s->busy = (uint8_t)(rnd() % 7u);
    s->lvl_a = (uint16_t)(rnd() % 600u);
    if ((rnd() & 3u) == 0) s->state = DETECT_SCAN; /* (more contacts' scans) */
    s->ref = (uint16_t)((rnd() & 7u) ? rnd() % 600u : rnd());
    s->ref_shift = (uint8_t)((rnd() & 7u) ? 5u + (rnd() & 1u) : rnd());
    s->tick_max = (uint16_t)(rnd() % 600u);
    s->since_lobe = (uint8_t)((rnd() & 1u) ? rnd() % 8u : rnd());
    /* a contact's scan: the peak near the sample's deviation, the last one near it too */
    int16_t dev = (int16_t)((int16_t)raw - (int16_t)((s->base_q4 + 8) >> 4));
    s->c.peak = (uint16_t)((rnd() & 3u) ? (uint16_t)near(dev < 0 ? (int16_t)-dev : dev, 200u) : rnd());
    s->last_pd = (rnd() & 1u) ? near(dev, 100u) : (int16_t)rnd();
    if (rnd() & 1u) s->until_lo = (uint16_t)(rnd() & 1u ? 0x8000u : 0x7FFFu); /* (filled in by main: near t) */
    /* and often right at the edges the paths test */
    if ((rnd() & 3u) == 0) s->since_lobe = (uint8_t)(249u + rnd() % 7u);
    if ((rnd() & 3u) == 0) s->above = (uint8_t)(252u + rnd() % 4u);
    if ((rnd() & 3u) == 0) s->ref = (uint16_t)(2u * g + rnd() % 3u - 1u);
    if ((rnd() & 3u) == 0) s->c.flags = (uint8_t)(s->c.flags & (uint8_t)~(DETECT_C_LIVE | DETECT_C_LOBE));
    if ((rnd() & 3u) == 0) { /* a scan's sample at a knee's edge: the last one a peak below it */
        int16_t pd = s->pol < 0 ? (int16_t)-dev : dev;
        s->last_pd = (int16_t)(pd - (int16_t)s->c.peak + (int16_t)(rnd() % 3u) - 1);
    }
}

/* A moving pad's state for the low-passed deviation: its history, four-sums
 * and rest such that lp comes out near 0, near a push's edge or anywhere
 * (either sign, past 255), the level near where it pushes (or anywhere,
 * or so high that its quarter carries), the disc either way or unknown. */
static void moving_state(detect_pad_state_t *s, uint16_t raw) {
    if (s->state == DETECT_REST && (rnd() & 7u)) s->state = (uint8_t)(1u + rnd() % 3u);
    if (rnd() & 1u) { /* a history near the sample, its sums right (else as random_state left them) */
        uint16_t spread = (rnd() & 1u) ? 8u : 200u;
        for (uint8_t i = 0; i < DETECT_HIST; i++)
            detect_hist_put(&s->hist[i], (uint16_t)(near((int16_t)raw, spread) & 1023), s->hist[i].t);
        uint16_t n0 = detect_hist_raw_back(s, 1), n1 = detect_hist_raw_back(s, 2), n2 = detect_hist_raw_back(s, 3),
                 n3 = detect_hist_raw_back(s, 4), n4 = detect_hist_raw_back(s, 5);
        s->s4[0] = (uint16_t)(n0 + n1 + n2 + n3);
        s->s4[1] = (uint16_t)(n1 + n2 + n3 + n4);
    }
    uint16_t s4 = (uint16_t)(s->s4[0] + raw - detect_hist_raw_back(s, 4));
    int16_t lp_raw = (int16_t)(s4 + s->s4[0] + s->s4[1]);
    /* lp wanted: small, a few hundred (a push's size), thousands, -32768
     * (whose way against it is -32768 again in 16 bits: the rest set from
     * the 16-bit difference, where the three quarters reach it) */
    uint8_t kind = (uint8_t)(rnd() % 5u);
    int16_t want = kind == 0 ? near(0, 40u) : kind == 1 ? near(0, 700u) : kind == 2 ? near(0, 6000u) : (int16_t)rnd();
    if (kind < 3) s->base_q4 = (int16_t)(((int32_t)lp_raw - want) * 4 / 3 + (int16_t)(rnd() % 5u) - 2);
    if (kind == 4) s->base_q4 = (int16_t)((int32_t)(int16_t)(uint16_t)(lp_raw + 32768u) * 4 / 3 + (int16_t)(rnd() % 5u) - 2);
    uint16_t mag = (uint16_t)(want < 0 ? -want : want);
    switch (rnd() % 4u) { /* the level: where mag is a push's edge, near mag, anywhere, past 52428 */
    case 0: s->lp_ref = mag > 360u ? (uint16_t)(near((int16_t)((mag - 360u) / 5u * 4u), 6u)) : (uint16_t)(rnd() % 8u); break;
    case 1: s->lp_ref = (uint16_t)near((int16_t)mag, 20u); break;
    case 2: s->lp_ref = rnd(); break;
    default: s->lp_ref = (uint16_t)(52400u + rnd() % 13000u); break;
    }
    switch (rnd() % 4u) {
    case 0: s->disc = 0; break;
    case 1: s->disc = 1; break;
    case 2: s->disc = -1; break;
    default: s->disc = (int8_t)rnd(); break;
    }
    if (rnd() & 1u) s->ref_shift = (uint8_t)(5u + (rnd() & 1u));
    if (rnd() & 1u) s->since_lobe = (uint8_t)(rnd() % 12u);
    if (rnd() & 1u) s->c.flags = (uint8_t)(s->c.flags ^ DETECT_C_LOBE);
}

static detect_pad_state_t a, b, before;

/* How often quick's rounds took each branch of the low-passed deviation,
 * judged on the C version's result: each must come up. */
enum { C_PUSH, C_BIG, C_HIGH_REF, C_LOBE, C_DISC_NEG, C_DISC_0, C_DISC_POS, C_OWN, C_FAST, C_TICK,
       C_LP_MIN, C_Q_UP, C_Q_DOWN, C_Q_SLEW_UP, C_Q_SLEW_DOWN, C_FAINT, C_FAINT_DEFERRED,
       C_T_FIRST_LOBE, C_T_SATURATE, C_T_OWN, C_T_REF_0, C_T_CREST, C_T_CREST_UNDER_THR, C_T_THR_MORE,
       C_T_SLOW, C_T_SLOWER, C_COUNT };
static const char *const COVER[C_COUNT] = {"push", "mag_over_255", "ref_quarter_carries", "first_lobe", "disc_neg", "disc_0", "disc_pos", "own", "fast", "tick", "lp_min_disc_neg",
                                           "quick_up", "quick_down", "quick_slew_up", "quick_slew_down", "faint",
                                           "faint_deferred", "tick_first_lobe", "tick_saturate", "tick_own",
                                           "tick_ref_0", "tick_crest", "tick_crest_under_thr", "tick_thr_more",
                                           "tick_slow", "tick_slower"};
static uint16_t cover[C_COUNT];

/* lp as the C works it out (before: the state before the sample). */
static int16_t lp_before(uint16_t raw) {
    uint16_t s4 = (uint16_t)(before.s4[0] + raw - detect_hist_raw_back(&before, 4));
    uint16_t lp_raw = (uint16_t)(s4 + before.s4[0] + before.s4[1]);
    int16_t bq = before.base_q4;
    return (int16_t)(lp_raw - (uint16_t)(bq - (bq >> 2) - ((bq & 3) == 3)));
}

static void count_cover(uint16_t raw) {
    uint8_t push = (b.ticked & 4u) != 0;
    if (before.state == DETECT_SCAN && !(before.c.flags & DETECT_C_LOBE)) {
        cover[C_LOBE]++;
        return;
    }
    int16_t moved = (int16_t)(b.base_q4 - before.base_q4);
    if (lp_before(raw) == -32768 && before.disc < 0) cover[C_LP_MIN]++;
    /* (quick's moving paths: the rest's step each way, short of LP_SLEW and at it; a scan's rest
     * goes on along the slope after, so only RING's and PENDING's, whose slope is then 0) */
    if (before.state != DETECT_SCAN) {
        if (moved > 0 && moved < 16 * LP_SLEW) cover[C_Q_UP]++;
        if (moved < 0 && moved > -16 * LP_SLEW) cover[C_Q_DOWN]++;
        if (moved == 16 * LP_SLEW) cover[C_Q_SLEW_UP]++;
        if (moved == -16 * LP_SLEW) cover[C_Q_SLEW_DOWN]++;
    }
    uint16_t ref = before.lp_ref;
    uint16_t decayed = (uint16_t)(ref - (ref >> (before.since_lobe < LP_FAST_SAMPLES ? 3 : 5)));
    if (push || b.lp_ref != decayed) { /* (the level is mag) */
        if (b.lp_ref > 255u) cover[C_BIG]++;
    }
    if (push) {
        cover[C_PUSH]++;
    } else if (before.ref_shift == 6u) {
        cover[C_OWN]++;
    } else {
        if (before.since_lobe < LP_FAST_SAMPLES) cover[C_FAST]++;
        if (ref > 0xFFFFu - (ref >> 2)) cover[C_HIGH_REF]++; /* (the level plus a quarter past 16 bits) */
    }
    if (b.ticked & 1u) cover[C_TICK]++;
    if (before.disc < 0) cover[C_DISC_NEG]++;
    else if (before.disc == 0) cover[C_DISC_0]++;
    else cover[C_DISC_POS]++;
}

/* The tick's branches (before: the state before it; b: the C version's after). */
static void count_tick_cover(void) {
    if (before.state == DETECT_SCAN && !(before.c.flags & DETECT_C_LOBE)) {
        cover[C_T_FIRST_LOBE]++;
        return;
    }
    uint16_t ref = before.ref;
    uint16_t down = before.ref_shift == 6u ? (uint16_t)(ref >> 4) : (uint16_t)(ref >> 3);
    if (detect_slow) { /* (step 16: 1.5 or 2 times that in a slow scan) */
        cover[detect_slow > 1u ? C_T_SLOWER : C_T_SLOW]++;
        down = (uint16_t)(down + (detect_slow > 1u ? down : down >> 1));
    }
    uint16_t decayed = (uint16_t)(ref - down - (ref ? 1u : 0u));
    if (before.since_lobe > 251u) cover[C_T_SATURATE]++;
    if (before.ref_shift == 6u) cover[C_T_OWN]++;
    if (ref == 0u) cover[C_T_REF_0]++;
    if (before.tick_max > decayed) cover[before.tick_max >= before.thr ? C_T_CREST : C_T_CREST_UNDER_THR]++;
    if ((uint16_t)(b.ref >> 2) < before.thr) cover[C_T_THR_MORE]++;
}

int main(void) {
    UBRR0H = 0;
    UBRR0L = 3; /* 250000 baud at 16 MHz */
    UCSR0A = 0;
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(TXEN0);
    UDR0 = '\n';
    TCCR1B = _BV(CS11); /* (the harness counts its time from Timer1's start) */
    uint16_t fails = 0;
    for (uint16_t round = 0; round < ROUNDS; round++) {
        uint16_t raw = (uint16_t)(rnd() & 1023u), t = rnd();
        if ((rnd() & 3u) == 0) raw = (rnd() & 1u) ? (uint16_t)(rnd() % 4u) : (uint16_t)(1019u + rnd() % 5u); /* the rails */
        uint8_t which = (uint8_t)(round % (P_COUNT + 2u)); /* (quick three times as often: the scan loop's text) */
        if (which >= P_COUNT) which = P_QUICK;
        random_state(&a, raw);
        if (which >= P_QUICK) moving_state(&a, raw);
        detect_slow = (rnd() & 1u) ? 0u : (uint8_t)(1u + (rnd() & 1u)); /* (how slow the scan is: step 16) */
        if (which == P_TICK && ((round >> 3) & 7u) == 1u) a.ref = 0; /* (the ringing's level gone) */
        if (which == P_FAST && (round & 16u)) { /* a faint shake at rest: just over the gate, coasting long */
            uint16_t g = (uint16_t)(a.nf + 4u), over = (uint16_t)(rnd() % 40u);
            int16_t dv = (int16_t)(g + over);
            a.state = DETECT_REST;
            a.learn = 0;
            a.thr = (uint16_t)(g + over + 1u + rnd() % 3u);
            if (rnd() & 1u) dv = (int16_t)-dv;
            a.base_q4 = (int16_t)(((int16_t)raw - dv) << 4); /* (the sample's deviation: dv) */
            a.busy = (uint8_t)((round & 32u) ? 0x80u : 4u + rnd() % 3u); /* (0x80: a contact's start put off) */
        }
        if (a.until_lo == 0x8000u || a.until_lo == 0x7FFFu) a.until_lo = (uint16_t)(t + (a.until_lo == 0x8000u ? 1u : 0u) - (rnd() & 1u));
        memcpy(&b, &a, sizeof a);
        memcpy(&before, &a, sizeof a);
        uint8_t ra, rb;
        switch (which) {
        case P_FAST: ra = detect_sample_fast(&a, raw, t); rb = detect_sample_fast_c(&b, raw, t); break;
        case P_QUICK: ra = detect_sample_quick(&a, raw, t); rb = detect_sample_quick_c(&b, raw, t); break;
        case P_TICK: detect_tick(&a); detect_tick_c(&b); ra = rb = 0; break;
        default: ra = detect_sample_scan(&a, raw, t); rb = detect_sample_scan_c(&b, raw, t); break;
        }
        if (which == P_QUICK && before.state != DETECT_REST) count_cover(raw);
        if (which == P_TICK) count_tick_cover();
        /* (a pad at rest coasting too long on a faint shake: done by the fast path, busy kept) */
        if ((which == P_FAST || which == P_QUICK) && before.state == DETECT_REST && !before.learn && rb &&
            before.base_q4 >= 0 && before.busy >= 4u && b.busy != 0u) {
            cover[C_FAINT]++;
            if (before.busy == 0x80u) cover[C_FAINT_DEFERRED]++;
        }
        if (ra != rb || memcmp(&a, &b, sizeof a) != 0) {
            if (fails++ < 8u) {
                const uint8_t *pa = (const uint8_t *)&a, *pb = (const uint8_t *)&b;
                uint8_t at = 0;
                while (at < sizeof a && pa[at] == pb[at]) at++;
                put_str("DIFF ");
                put_str(NAMES[which]);
                put_str(" round ");
                put_u16(round);
                put_str(" return ");
                put_u16(ra);
                put(' ');
                put_u16(rb);
                put_str(" first byte ");
                put_u16(at);
                put('\n');
            }
        }
    }
    put_str("COVER");
    for (uint8_t i = 0; i < C_COUNT; i++) {
        put(' ');
        put_str(COVER[i]);
        put(' ');
        put_u16(cover[i]);
    }
    put('\n');
    put_str("FASTPATH ");
    put_u16(ROUNDS);
    put(' ');
    put_u16(fails);
    put('\n');
    for (;;) {}
}
