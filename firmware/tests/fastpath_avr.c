/*
 * fastpath_avr.c - the detection core's paths in assembly (padbox/detect.c:
 * detect_sample_fast, detect_sample_ringing and detect_sample_scan)
 * against their C versions, on the AVR itself: an image of its own, run in
 * simavr by tests/firmware/test_firmware_fastpath.py.
 *
 * Each round makes a random pad state (fields within the ranges the
 * detector keeps them in, and past them), feeds one random sample to both
 * versions, each on its own copy, and compares the return value and every
 * byte of the state after. Prints "FASTPATH <rounds> <failures>" on the
 * UART (250000 baud) and, for the first failures, which function and byte.
 */
#include <avr/io.h>
#include <stddef.h>
#include <string.h>

#include "../padbox/detect.h"

uint8_t detect_sample_fast_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);
uint8_t detect_sample_ringing_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);
uint8_t detect_sample_scan_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/* The paths compared, one a round in turn. */
enum { P_FAST, P_RINGING, P_SCAN, P_COUNT };
static const char *const NAMES[P_COUNT] = {"fast", "ringing", "scan"};

#define ROUNDS 10000u

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

static detect_pad_state_t a, b;

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
        uint8_t which = (uint8_t)(round % P_COUNT);
        random_state(&a, raw);
        if (a.until_lo == 0x8000u || a.until_lo == 0x7FFFu) a.until_lo = (uint16_t)(t + (a.until_lo == 0x8000u ? 1u : 0u) - (rnd() & 1u));
        memcpy(&b, &a, sizeof a);
        uint8_t ra, rb;
        switch (which) {
        case P_FAST: ra = detect_sample_fast(&a, raw, t); rb = detect_sample_fast_c(&b, raw, t); break;
        case P_RINGING: ra = detect_sample_ringing(&a, raw, t); rb = detect_sample_ringing_c(&b, raw, t); break;
        default: ra = detect_sample_scan(&a, raw, t); rb = detect_sample_scan_c(&b, raw, t); break;
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
    put_str("FASTPATH ");
    put_u16(ROUNDS);
    put(' ');
    put_u16(fails);
    put('\n');
    for (;;) {}
}
