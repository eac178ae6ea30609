/*
 * detect.c - piezo slap detection; see detect.h for the algorithm.
 */
#include "detect.h"

#include <string.h>
#ifdef DETECT_DEBUG
#include <stdio.h>
#endif

/* Rare steps are kept out of the per-sample path (no inlining, even with
 * LTO): inlined, they crowd the registers and slow every common sample. */
#if defined(__GNUC__)
#define COLD __attribute__((noinline))
#else
#define COLD
#endif
/* detect_sample_fast stays a function of its own: with no calls inside it
 * needs no saved registers, where inlined into the firmware's scan loop the
 * compiler spills and recomputes its values. */
#define OWN_FRAME COLD

/* The rest tracker (an alpha-beta filter on the samples, gains as shifts):
 * at rest alpha 1/4, beta 1/32 (~200 Hz: hum within a few counts); while a
 * pad rings, 1/16 and 1/256 (the ringing, 1 kHz and up, averages out). */
#define REST_ALPHA 2
#define REST_BETA 5
#define RING_ALPHA 4
#define RING_BETA 8
/* The rest moves at most this much a sample (x 256): 8 counts, what 350 mV
 * of 60 Hz hum does at 260 us a sample (twice the scan period). */
#define MAX_SLOPE_Q8 2048
/* After detect_init, every sample beyond the gate still teaches the rest
 * and the noise floor, for up to this many: the tracker starts at the
 * first sample, with hum on it. */
#define LEARN_SAMPLES 96u
/* A pad at rest coasts over at most this many samples in a row just over
 * its gate before the slow path looks (the threshold's copy in the pad's
 * state says where "just" ends). */
#define REST_COAST 4u
/* busy at rest: a contact's start was put off (no work left in the scan). */
#define DEFERRED 0x80u
/* The gate: a sample within nf + GATE_MARGIN of the rest is quiet. */
#define GATE_MARGIN 4
/* A contact needs this many samples at or above the threshold; fewer is an
 * electrical glitch (static, a motor starting), never a hit. */
#define MIN_SAMPLES 2u
/* The ringing's level decays by 1/32 a sample (~4 ms, a table's
 * ringing dies faster) after a shake, 1/64 (~8 ms) after a reported contact
 * (a pad's own ringing lasts longer). */
#define REF_SHIFT_SHAKE 5
#define REF_SHIFT_OWN DETECT_REF_SHIFT_OWN
/* The first half-wave is over where it falls below its peak >> this
 * (nearly back at rest: a rest a few counts off cannot stretch it). */
#ifndef LOBE_END_SHIFT
#define LOBE_END_SHIFT 3
#endif
/* A moving pad's slow work comes every this many samples (a power of two). */
#define RING_TICK 4u
/* A rise climbs at least this many counts (plus a quarter of the noise
 * floor) a sample: a hand's first samples climb tens, hum a few. */
#define RISE_STEP 6
/* The deviation at the rails (half the ADC's range). */
#define RAIL_DEV 511
/* A clipped contact is not a clipped source's shake if the share of its
 * first half-wave at the rails is over the source's by this much (x 256).
 * (96 until 2.7.0: step 12 took enough false slaps away to spend some on
 * fewer drops.) */
#define CLIP_SHARE_MARGIN 64u
/* A disc's polarity is learnt from contacts with a first half-wave longer
 * than this (no shake's), known once DISC_SURE more went one way. */
#ifndef DISC_LOBE_MIN_US
#define DISC_LOBE_MIN_US 400u
#endif
/* A clipped first half-wave shorter than this is a shake's, however much
 * of it was at the rails: about a half-cycle of the table's ringing; a
 * hand's is longer (its rise alone is 0.1 to 0.5 ms, and the rails hold
 * it there). 260 since 2.11.0 (230 before): at 148 us a scan a first
 * half-wave of under two sample gaps, and at the image's paced scans one
 * of up to 260 us, counts as a shake's here (with step 10's nearer shake
 * at 1.5 x: firmware/experiments/README.md, "Tried in stop 33"). */
#ifndef CLIP_HAND_LOBE_US
#define CLIP_HAND_LOBE_US 260u
#endif
#ifndef DISC_SURE
#define DISC_SURE 3
#endif
#define DISC_VOTES_MAX 8
/* A shake's first half-wave is over this long after it arrives; vibration
 * crosses a table within XT_DELAY_MAX_US (the farthest pads of a 1.6 m
 * table, 1.5 m apart, at the 500 m/s of a slow MDF top's bending waves). */
#ifndef XT_LATE_US
#define XT_LATE_US 400
#endif
#ifndef XT_DELAY_MAX_US
#define XT_DELAY_MAX_US 3000
#endif

static int32_t since(uint32_t t, uint32_t ref) { return (int32_t)(t - ref); }

/* The place of the pair a, b (either order, a != b) in d->pair_delay. */
static uint8_t pair_slot(uint8_t a, uint8_t b) {
    if (a < b) {
        uint8_t t = a;
        a = b;
        b = t;
    }
    return (uint8_t)((uint8_t)(a * (uint8_t)(a - 1u)) >> 1) + b;
}

uint16_t detect_pair_delay(const detect_t *d, uint8_t a, uint8_t b) {
    if (a >= d->npads || b >= d->npads || a == b) return 0;
    uint8_t v = d->pair_delay[pair_slot(a, b)];
    return v & DETECT_PAIR_KNOWN ? (uint16_t)((v & 0x7Fu) * DETECT_PAIR_UNIT_US) : 0u;
}

/* The least and the most delay from pad a to pad b that the known pairs
 * allow, in DETECT_PAIR_UNIT_US: the largest |delay(a, x) - delay(x, b)|
 * over the pads x whose pairs with both are known (0: none), in the low
 * byte, and the smallest delay(a, x) + delay(x, b) (0xFF: none), in the
 * high byte (vibration crosses the top by the shortest way: no two legs
 * through a third pad are quicker, nor their difference slower). The
 * slots are walked as pair_slot() places them (x < a: a's row, a(a-1)/2 +
 * x; x > a: x's row, x(x-1)/2 + a), with no multiplication, and b's pair
 * is looked at only when a's is known: on a fresh table this is a few
 * cycles a pad. */
static COLD uint16_t pair_delay_bounds(const detect_t *d, uint8_t a, uint8_t b) {
    const uint8_t *pd = d->pair_delay;
    uint8_t bound = 0, most = 0xFFu, row_a = (uint8_t)((uint8_t)(a * (uint8_t)(a - 1u)) >> 1),
            row_b = (uint8_t)((uint8_t)(b * (uint8_t)(b - 1u)) >> 1);
    for (uint8_t x = 0, row_x = 0; x < d->npads; row_x = (uint8_t)(row_x + x), x++) {
        if (x == a || x == b) continue;
        uint8_t ax = pd[x < a ? (uint8_t)(row_a + x) : (uint8_t)(row_x + a)];
        if (!(ax & DETECT_PAIR_KNOWN)) continue;
        uint8_t xb = pd[x < b ? (uint8_t)(row_b + x) : (uint8_t)(row_x + b)];
        if (!(xb & DETECT_PAIR_KNOWN)) continue;
        ax &= 0x7Fu;
        xb &= 0x7Fu;
        uint8_t diff = ax > xb ? (uint8_t)(ax - xb) : (uint8_t)(xb - ax);
        if (diff > bound) bound = diff;
        if ((uint8_t)(ax + xb) < most) most = (uint8_t)(ax + xb);
    }
    return (uint16_t)((uint16_t)most << 8 | bound);
}

/* Step 29: the table's least delay, in DETECT_PAIR_UNIT_US, from the pairs
 * known so far: DETECT_FLOOR_PCT % of the shortest of them, once
 * DETECT_FLOOR_PAIRS are known (0: not yet), at most DETECT_FLOOR_MAX_US.
 * Worked out when asked, for a candidate source that fits in every other
 * way and began less than DETECT_FLOOR_MAX_US before (no byte of RAM is
 * kept for it: the stack's headroom has none to spare). */
static COLD uint8_t delay_floor(const detect_t *d) {
    uint8_t known = 0, least = 0x7Fu;
    for (uint8_t q = 0; q < DETECT_PAIRS; q++) {
        uint8_t v = d->pair_delay[q];
        if (!(v & DETECT_PAIR_KNOWN)) continue;
        known++;
        if ((uint8_t)(v & 0x7Fu) < least) least = (uint8_t)(v & 0x7Fu);
    }
    if (known < DETECT_FLOOR_PAIRS) return 0;
    uint8_t floor = (uint8_t)((uint16_t)least * DETECT_FLOOR_PCT / 100u);
    return floor > DETECT_FLOOR_MAX_US / DETECT_PAIR_UNIT_US ? (uint8_t)(DETECT_FLOOR_MAX_US / DETECT_PAIR_UNIT_US) : floor;
}

/* Whether pad j, which fits in every other way as the source of the
 * contact on pad that began gap us after j's, is ruled out for their pair
 * (not yet known): more than DETECT_XT_EARLY_US sooner than the table's
 * least delay (step 29), more than DETECT_PAIR_BOUND_EARLY_US sooner than
 * the least bound through a third pad (step 25), or, for a contact louder
 * than the ringing it rose out of (loud), more than
 * DETECT_PAIR_BOUND_LATE_US later than the most bound (step 31). A
 * function of its own, called once in the looks' loop, so that the loop
 * compiles much as without it. */
static COLD uint8_t bound_rules_out(const detect_t *d, uint8_t j, uint8_t pad, int32_t gap, uint8_t loud) {
    if (d->pair_delay[pair_slot(j, pad)] & DETECT_PAIR_KNOWN) return 0;
    /* (step 29: sooner than the table's least delay allows) */
    if (DETECT_FLOOR_PCT && gap < DETECT_FLOOR_MAX_US - (int32_t)DETECT_XT_EARLY_US &&
        gap < (int32_t)delay_floor(d) * DETECT_PAIR_UNIT_US - (int32_t)DETECT_XT_EARLY_US)
        return 1;
    if (!DETECT_PAIR_BOUND_EARLY_US && !DETECT_PAIR_BOUND_LATE_US) return 0;
    uint16_t bounds = pair_delay_bounds(d, j, pad);
    if (DETECT_PAIR_BOUND_EARLY_US && gap < (int32_t)(uint8_t)bounds * DETECT_PAIR_UNIT_US - (int32_t)DETECT_PAIR_BOUND_EARLY_US) return 1;
    /* (step 31: later than the most it can take, by far, and louder than the ringing it rose out of) */
    uint8_t most = (uint8_t)(bounds >> 8);
    return DETECT_PAIR_BOUND_LATE_US && loud && most != 0xFFu &&
           gap > (int32_t)most * DETECT_PAIR_UNIT_US + (int32_t)DETECT_PAIR_BOUND_LATE_US;
}

static uint16_t abs16(int16_t v) { return (uint16_t)(v < 0 ? -v : v); }
static uint8_t at_rail(uint16_t raw) { return raw <= DETECT_CLIP_LO || raw >= DETECT_CLIP_HI; }
static uint8_t prev_i(uint8_t i) { return (uint8_t)(i ? i - 1u : DETECT_HIST - 1u); }
static uint8_t newest_i(const detect_pad_state_t *s) { return prev_i(s->hist_at); }
#define ALWAYS_INLINE inline __attribute__((always_inline))
/* A raw sample's deviation from a rest of base_q4 (counts x 16), rounded. */
static ALWAYS_INLINE int16_t deviation(uint16_t raw, int16_t base_q4) {
    return (int16_t)((int16_t)raw - ((base_q4 + 8) >> 4));
}

/* The rest predicted for the sample `age` samples back (1: the newest),
 * x 16: the tracker's prediction, back along its slope. */
static int16_t rest_q4_at(const detect_pad_state_t *s, uint8_t age) {
    return (int16_t)(s->base_q4 - (int16_t)(((int16_t)age * s->slope_q8) >> 4));
}

/* The deviations of the whole history from the rest then, oldest first,
 * turned pol's way (one pass: the rest steps back along its slope). */
static void history_devs(const detect_pad_state_t *s, int8_t pol, int16_t *d) {
    int16_t b = s->base_q4, step = (int16_t)(s->slope_q8 >> 4);
    uint8_t i = s->hist_at;
    for (uint8_t k = DETECT_HIST; k-- > 0;) { /* newest first: age 1, 2, ... */
        i = (uint8_t)((i - 1u) & (DETECT_HIST - 1u));
        b = (int16_t)(b - step);
        int16_t v = (int16_t)((int16_t)detect_hist_raw(&s->hist[i]) - ((b + 8) >> 4));
        d[k] = pol < 0 ? (int16_t)-v : v;
    }
}

/* The deviation of the sample `age` samples back (1..DETECT_HIST; 1: the
 * newest) from the rest then, turned pol's way (pol: +1 or -1, a
 * contact's; a negation, not a multiply: the same 16 bits). */
static int16_t dev_back(const detect_pad_state_t *s, uint8_t age, int8_t pol) {
    int16_t v = deviation(detect_hist_raw_back(s, age), rest_q4_at(s, age));
    return pol < 0 ? (int16_t)-v : v;
}
/* How long the first half-wave of s's contact took from its onset to its
 * peak, in us, as far as the history before the newest sample shows (0:
 * the peak is older than that): step 26. */
static COLD uint16_t rise_to_peak_us(const detect_pad_state_t *s) {
    uint8_t best = 0;
    int16_t most = INT16_MIN;
    for (uint8_t age = 2; age <= DETECT_HIST; age++) {
        int16_t v = dev_back(s, age, s->pol);
        if (v > most) {
            most = v;
            best = age;
        }
    }
    /* (the rest is predicted back along its slope: a count or two off) */
    if (most + 2 < (int16_t)s->c.peak) return 0;
    int16_t r = (int16_t)(s->hist[(uint8_t)(s->hist_at - best) & (DETECT_HIST - 1u)].t - (uint16_t)s->c.onset_us);
    return r < 0 ? 0u : (uint16_t)r;
}
/* (an age from a count back: 0 is the oldest, DETECT_HIST) */
static uint8_t age_of(uint8_t n) {
    n &= DETECT_HIST - 1u;
    return n ? n : DETECT_HIST;
}

void detect_default_config(detect_pad_config_t *cfg) {
    cfg->slap = DETECT_DEFAULT_SLAP;
    cfg->touch = DETECT_DEFAULT_TOUCH;
    cfg->scan_us = DETECT_DEFAULT_SCAN_US;
    cfg->mask_us = DETECT_DEFAULT_MASK_US;
    cfg->xtalk = DETECT_DEFAULT_XTALK;
    cfg->xwin_us = DETECT_DEFAULT_XWIN_US;
}

uint16_t detect_start_threshold(const detect_pad_config_t *cfg) {
    if (cfg->touch == 0 || cfg->touch >= cfg->slap) return cfg->slap;
    return cfg->touch;
}

static uint16_t max_scan_us(const detect_t *d) {
    uint16_t m = 0;
    for (uint8_t i = 0; i < d->npads; i++)
        if (d->pad[i].scan_us > m) m = d->pad[i].scan_us;
    return m;
}

/* (d->max_scan_us: max_scan_us(d) as detect_settings_changed() found it) */
static uint32_t decide_time(const detect_t *d, const detect_pad_state_t *s) {
    return s->c.onset_us + d->max_scan_us + DETECT_DECIDE_MARGIN_US;
}

static uint16_t rest_threshold(const detect_t *d, const detect_pad_state_t *s, uint8_t pad);

void detect_settings_changed(detect_t *d) {
    d->max_scan_us = max_scan_us(d);
    /* A contact already waiting is decided by the new settings, one being
     * scanned scans for the new scan time. */
    for (uint8_t i = 0; i < d->npads; i++) {
        detect_pad_state_t *s = &d->st[i];
        if (s->state == DETECT_SCAN) s->until_lo = (uint16_t)(s->c.onset_us + d->pad[i].scan_us);
        if (s->state == DETECT_PENDING) s->until_lo = (uint16_t)decide_time(d, s);
        s->thr = rest_threshold(d, s, i);
    }
}

void detect_reset_state(detect_t *d) {
    for (uint8_t i = 0; i < DETECT_MAX_PADS; i++) {
        detect_pad_state_t *s = &d->st[i];
        s->state = DETECT_REST;
        s->c.flags = 0;
        s->busy = 0;
        s->env = 0;
    }
}

void detect_init(detect_t *d, uint8_t npads) {
    if (npads < 1) npads = 1;
    if (npads > DETECT_MAX_PADS) npads = DETECT_MAX_PADS;
    memset(d, 0, sizeof *d);
    d->npads = npads;
    for (uint8_t i = 0; i < DETECT_MAX_PADS; i++) {
        detect_default_config(&d->pad[i]);
        d->st[i].base_q4 = -1; /* no sample yet */
        d->st[i].xt_pad = 0xFFu;
        d->st[i].learn = LEARN_SAMPLES;
        d->st[i].mask_end_us = 0;
    }
    d->work = 0xFFu;
    d->shake_lobe8 = DETECT_SHAKE_LOBE_START_US / 8u;
    detect_settings_changed(d);
}

uint16_t detect_sharp_us(const detect_t *d) {
    /* (twice the learnt median less DETECT_SHAKE_LOBE_LESS_US; the median is in 8 us units) */
    uint16_t limit = (uint16_t)(d->shake_lobe8 * (2u * 8u));
    return limit > DETECT_XT_LOBE_US + DETECT_SHAKE_LOBE_LESS_US ? (uint16_t)(limit - DETECT_SHAKE_LOBE_LESS_US)
                                                                 : DETECT_XT_LOBE_US;
}

static uint16_t gate(const detect_pad_state_t *s) { return (uint16_t)(s->nf + GATE_MARGIN); }

/* A unit of the scan's budget for heavy work (a contact's start, a
 * ringing fit, a crosstalk look or decision): 1 if there is one (taken).
 * Without, the work waits for the pad's next sample: the walk back still
 * finds the start of the rise in the history, a decision comes a scan
 * later, so no scan grows long when many pads are busy at once. */
static uint8_t take_work(detect_t *d) {
    if (d->work == 0) return 0;
    if (!detect_work_taken()) return d->work = 0; /* (held back: none more this scan) */
    if (d->work != 0xFFu) d->work--;
    return 1;
}

/* (the host's: every unit; the image's, padbox.ino, paces its sampler) */
__attribute__((weak)) uint8_t detect_work_taken(void) { return 1; }
__attribute__((weak)) void detect_work_goes_on(void) {}

/* What a contact must reach at rest: the pad's threshold, or three gates on a noisy pad. */
static uint16_t rest_threshold(const detect_t *d, const detect_pad_state_t *s, uint8_t pad) {
    uint16_t g = (uint16_t)(3u * gate(s)), t = detect_start_threshold(&d->pad[pad]);
    return g > t ? g : t;
}

uint16_t detect_level(const detect_t *d, uint8_t pad, uint16_t raw) {
    if (pad >= d->npads || d->st[pad].base_q4 < 0) return 0;
    return abs16(deviation(raw, d->st[pad].base_q4));
}

/* One step of the rest tracker, an alpha-beta filter with its gains as
 * shifts: the prediction for the next sample from r4, a residual x 16; the
 * slope stays within MAX_SLOPE_Q8. At rest (track_residual) alpha 1/4 and
 * beta 1/32, ~200 Hz: hum followed within a few counts. */
static ALWAYS_INLINE void track_by(detect_pad_state_t *s, int16_t r4, uint8_t alpha, uint8_t beta) {
    int16_t slope = (int16_t)(s->slope_q8 + (r4 >> beta));
    if (slope > MAX_SLOPE_Q8) slope = MAX_SLOPE_Q8;
    if (slope < -MAX_SLOPE_Q8) slope = -MAX_SLOPE_Q8;
    s->slope_q8 = slope;
    s->base_q4 = (int16_t)(s->base_q4 + (r4 >> alpha) + (slope >> 4));
}
#define track_residual(s, r4) track_by((s), (r4), 2u, 1u)

/* At rest (a faint shake: the samples a little past the gate) the tracker
 * follows the mean of the last eight samples (~1 ms: a ringing of 0.8 kHz
 * and up mostly cancels in it, hum and drift do not), with gains a tick's
 * worth smaller than the samples'. */
static void track_mean_each(detect_pad_state_t *s) {
    uint16_t sum8 = 0;
    for (uint8_t i = 0; i < DETECT_HIST; i++) sum8 = (uint16_t)(sum8 + detect_hist_raw(&s->hist[i]));
    /* the mean x 16 against the rest predicted at the window's middle (4.5 samples back) */
    int16_t mid = (int16_t)(s->base_q4 - (int16_t)((9 * s->slope_q8) >> 5));
    track_by(s, (int16_t)((int16_t)(sum8 * 2u) - mid), 3u, 2u);
}

/* dt * num / den for 0 <= num < den (to 1/32 of dt, by halving: no
 * division in the firmware's per-contact paths). For num >= den it gives
 * dt less its last 1/32 (every halving taken): lp_back_us() relies on
 * that for a share of 1 or more. */
static __attribute__((noinline)) uint16_t scale_by_ratio(uint16_t dt, uint16_t num, uint16_t den) {
    uint16_t out = 0, part = dt;
    uint32_t n = num, dd = den;
    for (uint8_t k = 0; k < 5u; k++) {
        part >>= 1;
        n <<= 1;
        if (n >= dd) {
            n -= dd;
            out = (uint16_t)(out + part);
        }
    }
    return out;
}

/* How far before the rise's first sample (deviation e1, the one before it
 * e0, the one after e2, turned the contact's way) the contact began: along
 * the line through e1 and e2 (dt apart) back to rest, or to where the pad
 * already was its way, never before the sample before (gap back). */
static uint16_t back_date_us(int16_t e0, int16_t e1, int16_t e2, uint16_t gap, uint16_t dt, uint8_t e2_clipped) {
    if (e0 < 0) e0 = 0;
    if (e1 <= e0) return 0;
    if (e2 <= e1) return gap >> 1; /* peaked (or clipped) at once: within the gap */
    uint16_t up = (uint16_t)(e1 - e0), rise = (uint16_t)(e2 - e1);
    uint16_t b = up >= rise ? dt : scale_by_ratio(dt, up, rise);
    /* (a hand landing on a pad already moving, its second sample at the
     * rails: it rose further than that shows, the line is steeper and the
     * contact later than the line says; no further back than half the gap) */
    if (e2_clipped && e0 > (e1 >> 3) && b > (gap >> 1)) b = gap >> 1;
    return b > gap ? gap : b;
}

#if DETECT_REPORT_DATE
/* Step 37: s's contact is reported `later` us after its onset_us, which
 * stays as the rules date it (|later| at most 1000): to the nearest 16 us,
 * into marks' bits 1..7. (Called before the contact's first half-wave is
 * over: step 36's bit is still clear.) */
static void report_later(detect_pad_state_t *s, int16_t later) {
    s->marks = (uint8_t)(((later + 8) >> 4) << 1);
}
#endif

/* The date s's contact is reported at: onset_us, and step 37's offset
 * report_later() put in marks' bits 1..7 (none: onset_us). */
static uint32_t reported_onset_us(const detect_pad_state_t *s) {
    return s->c.onset_us + (int16_t)(8 * (int8_t)(s->marks & (uint8_t)~DETECT_M_LATE_PEAK));
}

/* Back-date the onset of the contact whose rise began `back` samples before
 * the newest: along the line through the rise's first two samples to rest,
 * never before the last sample before the rise. 0: not yet (the rise's
 * second sample is still to come). */
static uint8_t date_onset(detect_pad_state_t *s, uint8_t back) {
    if (back == 0) return 0;
    /* (the rise's first sample is back + 1 samples back, the one before it back + 2) */
    uint8_t first = (uint8_t)((s->hist_at - back - 1u) & (DETECT_HIST - 1u));
    uint8_t before = prev_i(first), second = (uint8_t)((first + 1u) % DETECT_HIST);
    int8_t pol = s->pol;
    int16_t e1 = dev_back(s, age_of((uint8_t)(back + 1u)), pol), e2 = dev_back(s, age_of(back), pol);
    int16_t e0 = dev_back(s, age_of((uint8_t)(back + 2u)), pol);
    uint16_t t1 = s->hist[first].t, gap = (uint16_t)(t1 - s->hist[before].t);
    /* onset_us holds the first sample's full time (start_contact). */
    s->c.onset_us -= back_date_us(e0, e1, e2, gap, (uint16_t)(s->hist[second].t - t1), at_rail(detect_hist_raw(&s->hist[second])));
    s->c.flags |= DETECT_C_DATED;
#if DETECT_REPORT_DATE
    /* (step 37: on a moving pad the sample before was the ringing's, not
     * the rest's, and the line stops at its level: the push began early in
     * the gap, under the ringing. Reported at the sample before, at most
     * DETECT_MOVING_REPORT_US back.) */
    if (gap > DETECT_MOVING_REPORT_US) gap = DETECT_MOVING_REPORT_US;
    int16_t later = (int16_t)(t1 - gap - (uint16_t)s->c.onset_us); /* (never later: -160..0 us) */
    /* (step 38: on a pad at rest, the same when the sample before was past
     * the gate: the pad had begun to move, and the line through the rise's
     * first two samples is steeper than the push's start, often a shake
     * landing on the second) */
    if ((!(s->c.flags & DETECT_C_CLEAN) || (DETECT_KNEE_REPORT && e0 > (int16_t)gate(s))) && later < 0) report_later(s, later);
#endif
    return 1;
}

/* Step 23: whether the low-passed deviation (the six newest samples
 * weighted 1 2 3 3 2 1 back, detect_lp's) of a history of deviations dv
 * (oldest first, turned the contact's way) was over the rest at the
 * sample before the newest, and rose to the newest: a push already under
 * way there. (The rise between the two is the three newest less the three
 * before them.) If so, the low-passed deviation at the newest (x 12, over
 * 0); else 0. */
static int16_t lp_rose(const int16_t *dv) {
    const int16_t *n = dv + DETECT_HIST - 1u; /* the newest */
    int16_t before = (int16_t)(n[-1] + 2 * n[-2] + 3 * n[-3] + 3 * n[-4] + 2 * n[-5] + n[-6]);
    int16_t up = (int16_t)(n[0] + n[-1] + n[-2] - n[-4] - n[-5] - n[-6]); /* (the newest's less it) */
    return before > 0 && up > 0 ? (int16_t)(before + up) : 0;
}

#if DETECT_REPORT_DATE
/* Step 37's date of a push step 23 found: how long before its newest
 * sample (deviation e, turned its way; the low-passed deviation there lp,
 * lp_rose()'s) the push began, dt the gap before that sample. The newest
 * sample's share of the low-passed deviation tells how far into its rise
 * the push is: a large share, a push just begun. 4 - 3.75 x that share
 * gaps back, at least one: fitted on the table model's pushes on ringing
 * pads (firmware/README.md, step 37). */
static uint16_t lp_back_us(uint16_t e, uint16_t lp, uint16_t dt) {
    /* (a share of 1 or more, e >= lp: scale_by_ratio() gives 31/32 of dt,
     * and the date is one gap back, as below) */
    uint16_t x = scale_by_ratio(dt, e, lp); /* dt x the share */
    uint16_t back = (uint16_t)(4u * (dt - x) + (x >> 2));
    return back < dt ? dt : back;
}
#endif

/* A contact starts at the newest sample (deviation e): find the first sample
 * of its rise in the history, and date it (now, or with the next sample). */
static COLD void start_contact(detect_t *d, detect_pad_state_t *s, uint8_t pad, int16_t e, uint16_t raw,
                               uint32_t t_us) {
    int8_t pol = e < 0 ? -1 : 1;
#ifdef DETECT_DEBUG
    uint8_t prev_state = s->state;
#endif
    /* Back while the samples before came up to it in real steps from
     * beyond the gate: the rise's first sample follows a quiet one (or one
     * moving the other way, or not rising into it), or a knee: a step more
     * than twice the one before it, where a contact landed on a pad that
     * was already moving (a ringing, a neighbour's shake). */
    int16_t lo = (int16_t)gate(s), step = (int16_t)(RISE_STEP + (s->nf >> 2));
    int16_t dv[DETECT_HIST]; /* oldest first: dv[DETECT_HIST - 1] is this sample */
    uint8_t moving = s->state != DETECT_REST;
    /* (step 23 only: a contact still in its scan whose first half-wave
     * was at the rails rings there, unevenly: the low-passed deviation's
     * push is then the clipped ringing's own, and is no reason to date
     * back) */
    uint8_t clipped_scan = s->state == DETECT_SCAN && DETECT_CLIPPED(&s->c);
    if (moving) {
        history_devs(s, pol, dv); /* (all of it: the walk back may go through all of it) */
    } else { /* only as far back as the walk goes (a few samples, from the rest then) */
        int16_t b = s->base_q4, st = (int16_t)(s->slope_q8 >> 4);
        uint8_t i = s->hist_at;
        for (uint8_t k = DETECT_HIST; k-- > 0;) {
            i = (uint8_t)((i - 1u) & (DETECT_HIST - 1u));
            b = (int16_t)(b - st);
            int16_t v = (int16_t)((int16_t)detect_hist_raw(&s->hist[i]) - ((b + 8) >> 4));
            dv[k] = pol < 0 ? (int16_t)-v : v;
            if (k < DETECT_HIST - 2u && (dv[k + 1] <= lo || k < DETECT_HIST - 6u)) break;
        }
    }
    uint8_t k = DETECT_HIST - 1u, back = 0;
    /* A start put off for want of work (at the sample before this one):
     * that sample is in the rise, however much steeper this one is. */
    uint8_t deferred = !moving && s->busy == DEFERRED;
#ifndef MOVING_WALK
#define MOVING_WALK 1
#endif
    if (MOVING_WALK && moving) {
        /* On a moving pad, back through every sample above half the
         * ringing's level: the ringing on top of the rise makes its steps
         * uneven, and the rest tracker has taken a little of the push. */
        uint16_t ring = s->ref;
        if (s->last_tick_max > ring) ring = s->last_tick_max;
        if (s->tick_max > ring) ring = s->tick_max;
        if (s->ticked > 1u) ring >>= 2; /* (the low-passed deviation saw the push: it may be well under the ringing's level) */
        int16_t lo_m = (int16_t)(lo + (ring >> 1));
        while (back < DETECT_HIST - 3u && dv[k - 1] > lo_m) {
            /* (but a knee where the sample before is under a third of
             * this one: a slow ringing's crest, the push lands here) */
            int16_t vj = dv[k], v = dv[k - 1], before = (int16_t)(v - dv[k - 2]);
            if (3 * v < vj && vj - v > 2 * (before > 0 ? before : 0) + step) break;
            k--;
            back++;
        }
    } else
    while (back < DETECT_HIST - 3u) {
        int16_t vj = dv[k], v = dv[k - 1];
        int16_t rise = (int16_t)(vj - v);
        /* (a sample past half the threshold is the contact's, however
         * little it rose to the next: a neighbour's shake may hold it back) */
        if (v <= lo || (rise < step && 2 * v < (int16_t)s->thr)) break;
        int16_t before = (int16_t)(v - dv[k - 2]);
        if (!(deferred && back == 0) && rise > 2 * (before > 0 ? before : 0) + step) break; /* a knee at k */
        k--;
        back++;
    }
    uint8_t j = (uint8_t)((s->hist_at + k) & (DETECT_HIST - 1u));
    s->c.flags = s->state == DETECT_REST ? (DETECT_C_LIVE | DETECT_C_CLEAN) : DETECT_C_LIVE;
    d->doubted &= (uint8_t)~(1u << pad); /* (its contact before is gone) */
    s->shake_gap = 0; /* (no sure shake of this contact yet) */
    /* On a moving pad, the ringing level it rose out of: its own share of the peak is what is above it. */
    s->under = s->state == DETECT_REST ? 0 : s->ref;
    s->pol = pol;
    s->state = DETECT_SCAN;
    s->c.onset_us = t_us - (uint16_t)((uint16_t)t_us - s->hist[j].t); /* the rise's first sample */
    s->c.peak = abs16(e);
    s->c.lobe_us = 0xFFFFu;
    uint16_t gap = (uint16_t)((uint16_t)t_us - s->hist[prev_i(newest_i(s))].t); /* (before this sample) */
    s->c.clipped_us = at_rail(raw) ? gap : 0u;
    s->above = 1;
    s->c.rails = 0;
    s->last_pd = (int16_t)(pol * e);
    s->last_t = (uint16_t)t_us;
    s->env = abs16(e);
    s->ref = 0; /* no new contact is looked for within the first half-wave */
    s->tick_max = 0;
    /* The pads' ticks fall in different scans, pad p's in the scans s with
     * s = p (mod RING_TICK): two of eight pads a scan, however their
     * contacts began. */
    s->tick = (uint8_t)((pad - d->scan) & (RING_TICK - 1u));
    if (s->tick == 0) s->tick = RING_TICK;
    s->busy = back; /* SCAN: how far back the rise began, until it is dated */
    s->marks = 0;
    if (back) { /* the line through the rise's first two samples (k, k + 1), from the one before */
        uint16_t t1 = s->hist[j].t;
        uint8_t j2 = (uint8_t)((j + 1u) & (DETECT_HIST - 1u));
        s->c.onset_us -= back_date_us(dv[k - 1], dv[k], dv[k + 1], (uint16_t)(t1 - s->hist[prev_i(j)].t),
                                      (uint16_t)(s->hist[j2].t - t1), at_rail(detect_hist_raw(&s->hist[j2])));
        s->c.flags |= DETECT_C_DATED;
    }
    int16_t lp;
    if (DETECT_LP_BACK_US && moving && !clipped_scan && (s->ticked & 4u) && (lp = lp_rose(dv)) > 0) {
        /* Step 23: a push the low-passed deviation found, under way a
         * sample before: it lags the push by 2.5 samples, and the walk
         * back above stops at the ringing's crest. */
        uint32_t lp_onset = t_us - DETECT_LP_BACK_US;
        if (since(s->c.onset_us, lp_onset) > 0) {
            s->c.onset_us = lp_onset;
            s->c.flags |= DETECT_C_DATED;
        }
#if DETECT_REPORT_DATE
        /* (the report's date, from the rise's shape; the rules keep the one above, which they were made
         * with: judged by this one, the neighbours' shakes on ringing pads no longer fit their sources) */
        int16_t later = (int16_t)((uint16_t)t_us - lp_back_us((uint16_t)dv[DETECT_HIST - 1u], (uint16_t)lp, gap) -
                                  (uint16_t)s->c.onset_us);
        /* (not within four samples of the end of the first half-wave
         * before it, nor in it: that half-wave is still in the six samples
         * of the low-passed deviation, and the push's share of it tells
         * nothing of the push; since_lobe counts on by 4 at each tick) */
        if (s->since_lobe > 4u) report_later(s, later > 1000 ? 1000 : later < -1000 ? -1000 : later);
#endif
    }
    s->since_lobe = 0; /* (after step 37's look at it above) */
    if (s->disc && s->disc != pol) s->c.flags |= DETECT_C_XTALK | DETECT_C_WRONG; /* the table's, not a hand's */
    s->until_lo = (uint16_t)(s->c.onset_us + d->pad[pad].scan_us);
    s->thr = rest_threshold(d, s, pad);
    s->lvl_a = 0; /* (the slow path, until the first half-wave is over) */
    s->lp_ref = 0;
#ifdef DETECT_DEBUG
    fprintf(stderr, "pad %u start at %u e %d back %u onset %u (state was %u, ref %u nf %u)\n", pad + 1, t_us, e, back,
            s->c.onset_us, prev_state, s->ref, s->nf);
#endif
}

/* A clipped contact's peak, estimated (after Edrumulus' overload
 * correction): as much again for every 256 us its first half-wave spent at
 * the rails so far, a harder slap stays clipped longer. (A finer estimate
 * from the clipped share of the half-wave, R / cos(pi f / 2) for a
 * half-sine, was tried: a sample's resolution makes it too noisy on the
 * short half-waves that matter.) */
#define CLIP_US_PER_HALF 256u /* (a shift) */
static uint16_t estimated_peak(const detect_contact_t *c) {
    if (!DETECT_CLIPPED(c)) return c->peak;
    uint32_t p = c->peak + ((uint32_t)c->peak * c->clipped_us) / CLIP_US_PER_HALF;
    return p > 0xFFFFu ? 0xFFFFu : (uint16_t)p;
}

static void end_scan(detect_t *d, detect_pad_state_t *s) {
    s->state = DETECT_PENDING;
    s->until_lo = (uint16_t)decide_time(d, s);
}

/* A new contact on a moving pad is one the pad's motion cannot explain:
 * |d| past the level the ringing stays under plus a quarter of it (at least
 * the threshold) and two gates (worked out as the level the fast path
 * compares with), or a push in the low-passed deviation (detect_lp). */
static ALWAYS_INLINE void set_levels(detect_pad_state_t *s) {
    uint16_t g = gate(s), ref = s->ref, more = ref >> 2;
    if (more < s->thr) more = s->thr; /* and a new contact of at least the threshold's own */
    s->lvl_a = (uint16_t)(ref + more + 2u * g);
}

__attribute__((used, externally_visible)) uint8_t detect_slow; /* (the assembly's ASM_TICK reads it by name) */

/* Every RING_TICK samples the ringing's level decays (by ref >> (shift - 2),
 * ~ref >> shift a sample), slower than any ringing: a ringing never rises
 * past it, a new contact does. */
static ALWAYS_INLINE void follow_ring(detect_pad_state_t *s) {
    uint16_t ref = s->ref;
    /* (two constant shifts rather than a variable one: a loop on the AVR) */
    uint16_t down = s->ref_shift == REF_SHIFT_OWN ? (uint16_t)(ref >> (REF_SHIFT_OWN - 2)) : (uint16_t)(ref >> (REF_SHIFT_SHAKE - 2));
    if (detect_slow) down = (uint16_t)(down + (detect_slow > 1u ? down : down >> 1)); /* (in time: step 16) */
    s->ref = (uint16_t)(ref - down - (ref ? 1u : 0u));
    /* (and up to the ringing's crests: some discs ring longer than any decay
     * a shake's could be given; a new contact rises faster than this) */
    if (s->tick_max > s->ref && s->tick_max >= s->thr) s->ref = s->tick_max; /* (what is under the threshold starts nothing) */
    s->last_tick_max = s->tick_max;
    s->tick_max = 0;
    set_levels(s);
    s->tick = RING_TICK;
}

static uint8_t crosstalk_source(detect_t *d, const detect_pad_state_t *s, uint8_t pad);

/* The time between the samples either side of the first half-wave's end, us. */
static uint16_t lobe_gap_us(const detect_pad_state_t *s) { return (uint16_t)(s->lobe_gap4 << 2); }

/* Table vibration: a first half-wave over within DETECT_XT_LOBE_US, or
 * the table's learnt limit (step 13) if longer (at 130
 * us a sample; the half-wave is measured to about a sample, so a slower
 * scan allows as much more). */
static uint8_t sharp_on(const detect_t *d, const detect_pad_state_t *s, const detect_contact_t *c) {
    uint16_t dt = lobe_gap_us(s), limit = detect_sharp_us(d);
    if (dt > 130u && dt < 1000u) limit = (uint16_t)(limit + dt - 130u);
    /* At the rails for two samples or more, a shake was a hard one (over
     * ~1.5 x the rails), and its first half-wave is at most ~400 us long
     * however the samples fall: longer, it is a hand's. */
    if (c->clipped_us > DETECT_XT_CLIP_LONG_US && limit > DETECT_XT_CLIPPED_LOBE_US) limit = DETECT_XT_CLIPPED_LOBE_US;
    return (c->flags & DETECT_C_LOBE) && c->lobe_us <= limit;
}
#define sharp(c) sharp_on(d, s, (c))

/* A light contact that is a finger's touch: it began on a pad at rest, and
 * its first half-wave lasted at least DETECT_TOUCH_LOBE_US and was over
 * within the scan (a finger pushes and lets go; the vibration of two or
 * three slaps overlapping makes lobes of up to ~0.65 ms, and a first
 * half-wave that never ends is the rest tracker losing a ringing pad). */
/* A contact that is nothing but a moving pad's ringing: it began on a
 * moving pad and its first half-wave was shorter than any hand's push (a
 * half-cycle of the table's 1.5..3 kHz ringing), and never reached the
 * rails (the ringing decays from what made it; a slap at the rails on a
 * ringing pad, sampled slowly in a burst, can show a first half-wave as
 * short as that). */
static uint8_t ringing_only(const detect_contact_t *c) {
    return !(c->flags & DETECT_C_CLEAN) && (c->flags & DETECT_C_LOBE) && c->lobe_us < DETECT_HAND_LOBE_MIN_US
           && !DETECT_CLIPPED(c)
        ;
}

/* Step 22: a contact on a moving pad whose first half-wave lasted
 * DETECT_SWELL_LOBE_US or longer (or was not over within the scan), and
 * that rose no higher than the ringing it rose out of (peak: its
 * estimated peak), is no hand's push, however unsharp: the ringing's own
 * slow swell (shakes overlapping, or the rest tracker behind a ringing
 * pad in a burst's slow scans), which only the low-passed deviation took
 * for a push. It is judged as a shake might be. */
static uint8_t ringing_swell(const detect_pad_state_t *s, const detect_contact_t *c, uint16_t peak) {
    return DETECT_SWELL_LOBE_US < 0xFFFFu && /* (0xFFFF: step 22 off) */
           !(c->flags & DETECT_C_CLEAN) && c->lobe_us >= DETECT_SWELL_LOBE_US && peak <= s->under;
}

static uint8_t touch_like(const detect_contact_t *c) {
    return (c->flags & (DETECT_C_CLEAN | DETECT_C_LOBE)) == (DETECT_C_CLEAN | DETECT_C_LOBE) &&
           c->lobe_us >= DETECT_TOUCH_LOBE_US;
}
static uint32_t xt_source_onset; /* the onset of the contact crosstalk_source() last found */
/* The trace's word on why a look ruled a source out, or looked at none
 * (DETECT_DEBUG builds only: experiments/falses.py --why reads it). */
#ifdef DETECT_DEBUG
#define XT_WHY(...) fprintf(stderr, __VA_ARGS__)
#else
#define XT_WHY(...) ((void)0)
#endif

static COLD void moving_sample(detect_t *d, detect_pad_state_t *s, uint8_t pad, int16_t e, uint16_t raw, uint32_t t_us);

/* A pad leaving rest: the sums of four samples ending at the newest two,
 * worked out afresh from the history (detect_lp keeps them on). */
static void lp_start(detect_pad_state_t *s) {
    const detect_hist_t *h = s->hist;
    uint8_t i = s->hist_at; /* (the newest is the one before it) */
    uint16_t n1 = detect_hist_raw(&h[(i - 2u) & 7u]), n2 = detect_hist_raw(&h[(i - 3u) & 7u]),
             n3 = detect_hist_raw(&h[(i - 4u) & 7u]);
    s->s4[0] = (uint16_t)(detect_hist_raw(&h[(i - 1u) & 7u]) + n1 + n2 + n3);
    s->s4[1] = (uint16_t)(n1 + n2 + n3 + detect_hist_raw(&h[(i - 5u) & 7u]));
}

/* Into the pad's history: every sample, whatever its state. */
static ALWAYS_INLINE void push_sample(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
    uint8_t at = s->hist_at;
    detect_hist_put(&s->hist[at], raw, t_lo);
    s->hist_at = (uint8_t)((at + 1u) & (DETECT_HIST - 1u));
}

/* On the AVR detect_sample_fast is in assembly (below: the one path of
 * every quiet sample, in ~130 cycles where avr-gcc's takes ~160); this C
 * version is the host's, and the assembly's for the rare samples it leaves
 * (no sample yet, the start-up's learning). The two must agree to the bit:
 * tests/firmware/test_firmware_fastpath.py runs both on the AVR on random
 * states and compares every byte (so does detect_sample_ringing's). */
#if defined(__AVR__) && !defined(DETECT_PORTABLE)
#define DETECT_FAST_ASM 1
__attribute__((used, externally_visible, noinline)) uint8_t detect_sample_fast_c(detect_pad_state_t *s, uint16_t raw,
                                                                                  uint16_t t_lo);
uint8_t detect_sample_fast_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
#else
OWN_FRAME uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
#endif
    int16_t base = s->base_q4;
    if (base < 0) return 0;
    int16_t e = deviation(raw, base);
    push_sample(s, raw, t_lo);
    uint16_t a = (uint16_t)(e < 0 ? -e : e);
    uint8_t nf = s->nf;
    if (s->learn) { /* still learning: every sample is the rest (the floor, once the tracker has settled) */
        s->learn--;
        track_residual(s, (int16_t)(((int16_t)raw << 4) - base));
        if (s->learn < 32u && a > nf) s->nf = (uint8_t)(a > 255u ? 255u : a);
        return 1;
    }
    if (a >= (uint16_t)(nf + GATE_MARGIN)) {
        /* Just over the gate (hum a little off, a faint shake): the rest
         * goes on as it went for a few samples; past the threshold the slow
         * path (detect_step sees the sample in the history). */
        if (a >= s->thr) return 0;
        if (s->busy < REST_COAST) {
            s->busy++;
            s->base_q4 = (int16_t)(base + (s->slope_q8 >> 4));
            return 1;
        }
        /* For longer, a faint shake: the rest follows its mean, here rather
         * than in rest_slow() (a neighbour's shake keeps a pad at rest here
         * for many samples in a row in a burst). The same as rest_slow()'s
         * result: s->thr is rest_threshold() as it was when last set, and
         * that only grows until it is set again (the floor only rises
         * meanwhile), so a under it is under rest_threshold() too. */
        if (s->busy == DEFERRED) s->busy = REST_COAST; /* (the start put off fell back: no rise) */
        track_mean_each(s);
        return 1;
    }
    s->busy = 0;
    track_residual(s, (int16_t)(((int16_t)raw << 4) - base));
    /* The noise floor: up halfway to a louder quiet sample, down a count
     * every 32 quiet samples or so (the slow path), when the sample's time
     * folded on itself (its low byte XOR its high byte) ends in five 0
     * bits. Not the time's own low bits: a pad sampled at a fixed period
     * (148 us: 20 mod 32) sees only a quarter of their values, 0 for one
     * pad in four, so three floors in four never came down, and every
     * faint shake within the gate raised them for good: after some seconds
     * of busy play a soft slap no longer passed the gate. Folded, every phase of
     * every period is due once in 32 samples on average, at most ~61
     * apart at 148 us. */
    if (a > nf) s->nf = (uint8_t)(nf + ((a - nf + 1u) >> 1));
    else if (((t_lo ^ (t_lo >> 8)) & 0x1Fu) == 0) return 0;
    return 1;
}

#ifdef DETECT_FAST_ASM
#include <stddef.h>

#include "detect_asm.h" /* (the pieces the scan loop runs inline too) */
#if GATE_MARGIN != DETECT_ASM_GATE_MARGIN
#error "detect_asm.h: DETECT_ASM_GATE_MARGIN must be GATE_MARGIN"
#endif
/* Pieces of the fast paths in assembly, with Z = s, r18:r19 = base_q4,
 * r22:r23 = raw, r20:r21 = t_lo. First Z and base from s (r24:r25). */
#define ASM_ENTER                                                                                             \
    "movw r30, r24\n\t"                                                                                      \
    "ldd r18, Z+%[base]\n\t"                                                                                 \
    "ldd r19, Z+%[base]+1\n\t"
/* The same, and a global label past the movw: detect_sample_quick jumps
 * there with Z set. */
#define ASM_ENTER_AT(label)                                                                                   \
    "movw r30, r24\n\t"                                                                                      \
    ".global " label "\n"                                                                                    \
    label ":\n\t"                                                                                            \
    "ldd r18, Z+%[base]\n\t"                                                                                 \
    "ldd r19, Z+%[base]+1\n\t"
/* The quiet sample in assembly, the C above step for step: s in r24:r25,
 * raw in r22:r23, t_lo in r20:r21 (avr-gcc's convention), only
 * call-clobbered registers. */
__attribute__((naked, noinline, used, externally_visible)) uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t raw,
                                                                                       uint16_t t_lo) {
    (void)s;
    (void)raw;
    (void)t_lo;
    asm volatile(
        ASM_ENTER
        "sbrc r19, 7\n\t"
        "rjmp 9f\n\t" /* no sample yet */
        "ldd r0, Z+%[learn]\n\t"
        "tst r0\n\t"
        "breq 0f\n\t"
        "rjmp 9f\n" /* still learning */
        "0:\n\t"
        ASM_PUSH_SAMPLE
        "eor r20, r21\n\t" /* (the time folded: the C's t_lo ^ (t_lo >> 8)) */
        "andi r20, 0x1F\n\t" /* r20: the floor's count is due at 0 */
        /* e = raw - ((base + 8) >> 4), a = |e| in r26:r27 */
        "movw r26, r22\n\t"
        ASM_LEVEL("r26", "r27")
        /* within the gate (nf + GATE_MARGIN)? */
        "ldd r21, Z+%[nf]\n\t"
        "mov r24, r21\n\t"
        "clr r25\n\t"
        "adiw r24, %[margin]\n\t"
        "cp r26, r24\n\t"
        "cpc r27, r25\n\t"
        "brlo 0f\n\t"
        "rjmp 5f\n" /* over the gate */
        "0:\n\t"
        "std Z+%[busy], r1\n\t" /* quiet: busy = 0 */
        /* the floor up halfway to a louder quiet sample (a - nf is 1..3),
         * or, if not, 0 when its count is due */
        "ldi r24, 1\n\t"
        "cp r21, r26\n\t"
        "cpc r1, r27\n\t"
        "brsh 2f\n\t"
        "mov r25, r26\n\t"
        "sub r25, r21\n\t"
        "inc r25\n\t"
        "lsr r25\n\t"
        "add r21, r25\n\t"
        "std Z+%[nf], r21\n\t"
        "rjmp 3f\n"
        "2:\n\t"
        "tst r20\n\t"
        "brne 3f\n\t"
        "clr r24\n"
        "3:\n\t"
        /* the tracker: r4 = (raw << 4) - base; slope += r4 >> 1, within
         * +-MAX_SLOPE_Q8; base += (r4 >> 2) + (slope >> 4) */
        "swap r23\n\t"
        "swap r22\n\t"
        "andi r23, 0xF0\n\t"
        "eor r23, r22\n\t"
        "andi r22, 0xF0\n\t"
        "eor r23, r22\n\t"
        "sub r22, r18\n\t"
        "sbc r23, r19\n\t"
        "movw r26, r22\n\t"
        "asr r27\n\t"
        "ror r26\n\t"
        "ldd r20, Z+%[slope]\n\t"
        "ldd r21, Z+%[slope]+1\n\t"
        "add r20, r26\n\t"
        "adc r21, r27\n\t"
        "cpi r20, lo8(%[smax] + 1)\n\t"
        "ldi r26, hi8(%[smax] + 1)\n\t"
        "cpc r21, r26\n\t"
        "brlt 4f\n\t"
        "ldi r20, lo8(%[smax])\n\t"
        "ldi r21, hi8(%[smax])\n\t"
        "rjmp 6f\n"
        "4:\n\t"
        "cpi r20, lo8(-(%[smax]))\n\t"
        "ldi r26, hi8(-(%[smax]))\n\t"
        "cpc r21, r26\n\t"
        "brge 6f\n\t"
        "ldi r20, lo8(-(%[smax]))\n\t"
        "ldi r21, hi8(-(%[smax]))\n"
        "6:\n\t"
        "std Z+%[slope], r20\n\t"
        "std Z+%[slope]+1, r21\n\t"
        "asr r23\n\t" "ror r22\n\t" "asr r23\n\t" "ror r22\n\t"
        "add r18, r22\n\t"
        "adc r19, r23\n\t"
        ASM_BASE_ADD_SLOPE
        "ret\n"
        /* just over the gate: past the threshold or coasting too long, the
         * slow path (0); else busy one on and the rest on along its slope */
        "5:\n\t"
        "ldd r24, Z+%[thr]\n\t"
        "ldd r25, Z+%[thr]+1\n\t"
        "cp r26, r24\n\t"
        "cpc r27, r25\n\t"
        "brsh 8f\n\t"
        "ldd r24, Z+%[busy]\n\t"
        "cpi r24, %[coast]\n\t"
        "brsh 7f\n\t"
        "inc r24\n\t"
        "std Z+%[busy], r24\n\t"
        ASM_REST_ON
        "ldi r24, 1\n\t"
        "ret\n"
        "8:\n\t"
        "clr r24\n\t"
        "ret\n"
        "9:\n\t"
        "jmp detect_sample_fast_c\n"
        /* coasting too long (busy in r24): a faint shake, the rest after its
         * mean (track_mean_each); a start put off falls back to coasting */
        "7:\n\t"
        "cpi r24, %[deferred]\n\t"
        "brne 1f\n\t"
        "ldi r24, %[coast]\n\t"
        "std Z+%[busy], r24\n"
        "1:\n\t"
        /* the history's sum x 2 in r24:r25: the bytes' sum (an entry's
         * byte at offset 2, 3 bytes an entry) x 8, + 32 (the samples are
         * 4 x their bytes + 2) */
        "movw r26, r30\n\t"
        "subi r26, lo8(-(%[hist] + 2))\n\t"
        "sbci r27, hi8(-(%[hist] + 2))\n\t"
        "ld r24, X\n\t"
        "clr r25\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "adiw r26, 3\n\t" "ld r0, X\n\t" "add r24, r0\n\t" "adc r25, __zero_reg__\n\t"
        "lsl r24\n\t" "rol r25\n\t" "lsl r24\n\t" "rol r25\n\t"
        "lsl r24\n\t"
        "rol r25\n\t"
        "adiw r24, 32\n\t"
        /* r4 = that - (base - ((9 slope) >> 5)), the rest at the window's middle */
        "ldd r20, Z+%[slope]\n\t"
        "ldd r21, Z+%[slope]+1\n\t"
        "movw r22, r20\n\t"
        "lsl r22\n\t" "rol r23\n\t" "lsl r22\n\t" "rol r23\n\t" "lsl r22\n\t" "rol r23\n\t"
        "add r22, r20\n\t"
        "adc r23, r21\n\t"
        "asr r23\n\t" "ror r22\n\t" "asr r23\n\t" "ror r22\n\t" "asr r23\n\t" "ror r22\n\t"
        "asr r23\n\t" "ror r22\n\t" "asr r23\n\t" "ror r22\n\t"
        "add r24, r22\n\t"
        "adc r25, r23\n\t"
        "sub r24, r18\n\t"
        "sbc r25, r19\n\t"
        /* slope += r4 >> 2, within +-MAX_SLOPE_Q8 */
        "movw r22, r24\n\t"
        "asr r23\n\t" "ror r22\n\t" "asr r23\n\t" "ror r22\n\t"
        "add r20, r22\n\t"
        "adc r21, r23\n\t"
        "cpi r20, lo8(%[smax] + 1)\n\t"
        "ldi r26, hi8(%[smax] + 1)\n\t"
        "cpc r21, r26\n\t"
        "brlt 2f\n\t"
        "ldi r20, lo8(%[smax])\n\t"
        "ldi r21, hi8(%[smax])\n\t"
        "rjmp 3f\n"
        "2:\n\t"
        "cpi r20, lo8(-(%[smax]))\n\t"
        "ldi r26, hi8(-(%[smax]))\n\t"
        "cpc r21, r26\n\t"
        "brge 3f\n\t"
        "ldi r20, lo8(-(%[smax]))\n\t"
        "ldi r21, hi8(-(%[smax]))\n"
        "3:\n\t"
        "std Z+%[slope], r20\n\t"
        "std Z+%[slope]+1, r21\n\t"
        /* base += (r4 >> 3) + (slope >> 4) */
        "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t"
        "add r18, r24\n\t"
        "adc r19, r25\n\t"
        ASM_BASE_ADD_SLOPE
        "ldi r24, 1\n\t"
        "ret\n\t" ::
        [base] "n"(offsetof(detect_pad_state_t, base_q4)), [learn] "n"(offsetof(detect_pad_state_t, learn)),
        ASM_PUSH_OPERANDS, [nf] "n"(offsetof(detect_pad_state_t, nf)), [margin] "n"(GATE_MARGIN),
        [busy] "n"(offsetof(detect_pad_state_t, busy)), [slope] "n"(offsetof(detect_pad_state_t, slope_q8)),
        [smax] "n"(MAX_SLOPE_Q8), [thr] "n"(offsetof(detect_pad_state_t, thr)), [coast] "M"(REST_COAST),
        [deferred] "M"(DEFERRED));
}
#endif

/* (detect_sample_at() counted the tick and did its work before these: no
 * call in them, and each of the few values a state needs, so few saved
 * registers) */

/* (On the AVR the moving pad's inline path, ASM_QUICK_MOVING, does this
 * itself: this is the host's, and that path's reference.) */
OWN_FRAME uint8_t detect_sample_ringing(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
    uint8_t ticked = s->ticked;
    int16_t base = s->base_q4;
    int16_t e = deviation(raw, base);
    push_sample(s, raw, t_lo);
    /* The common sample, nothing new (anything else, before any of it is
     * done: the slow path). */
    uint16_t a = (uint16_t)(e < 0 ? -e : e);
    if (a > s->lvl_a || ticked > 1u) return 0;
    if (ticked) {
        if (s->state == DETECT_RING && s->ref < 2u * gate(s)) return 0; /* back to rest, maybe */
    } else {
        s->base_q4 = (int16_t)(base + (s->slope_q8 >> 4)); /* the rest goes on as it went */
    }
    if (a > s->tick_max) s->tick_max = a;
    return 1;
}

#ifdef DETECT_FAST_ASM /* (on the AVR the assembly below is detect_sample_scan) */
__attribute__((used, externally_visible, noinline)) uint8_t detect_sample_scan_c(detect_pad_state_t *s, uint16_t raw,
                                                                                  uint16_t t_lo);
uint8_t detect_sample_scan_c(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
#else
OWN_FRAME uint8_t detect_sample_scan(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
#endif
    int16_t base = s->base_q4;
    int16_t e = deviation(raw, base);
    push_sample(s, raw, t_lo);
    if ((int16_t)(t_lo - s->until_lo) >= 0) return 0; /* the scan's end */
    uint8_t flags = s->c.flags;
    /* (every sample of the scan that reaches here, whatever path it takes next: step 14's count) */
    if (at_rail(raw) && s->c.rails < 255u) s->c.rails++;
    uint16_t a = (uint16_t)(e < 0 ? -e : e);
    int16_t pd = s->pol < 0 ? (int16_t)-e : e;
    if (!(flags & DETECT_C_LOBE)) { /* within the first half-wave */
        if (!(flags & DETECT_C_DATED) || pd <= (int16_t)(s->c.peak >> LOBE_END_SHIFT)) return 0;
        if (pd < s->last_pd) s->c.flags = (uint8_t)(flags | DETECT_C_TURNED);
        else if ((flags & DETECT_C_TURNED) && pd > (int16_t)(2u * s->c.peak + s->thr)) return 0; /* risen again */
        else if (pd - s->last_pd > (int16_t)s->c.peak) return 0; /* a jump past all it reached: a knee, maybe */
        if (raw <= DETECT_CLIP_LO || raw >= DETECT_CLIP_HI)
            s->c.clipped_us = (uint16_t)(s->c.clipped_us + (uint16_t)(t_lo - s->last_t));
        s->last_pd = pd;
        s->last_t = t_lo;
    } else {
        if (a > s->lvl_a || s->ticked > 1u) return 0;
        if (a > s->tick_max) s->tick_max = a;
    }
    s->base_q4 = (int16_t)(base + (s->slope_q8 >> 4)); /* the rest goes on as it went */
    if (pd > (int16_t)s->c.peak) s->c.peak = (uint16_t)pd;
    if (a >= s->thr && s->above < 255u) s->above++;
    if (a > s->env) s->env = a;
    return 1;
}

#ifdef DETECT_FAST_ASM
/* detect_sample_scan in assembly, the C version step for step (~80 cycles
 * where avr-gcc's takes ~100 and more). */
__attribute__((naked, noinline, used, externally_visible)) uint8_t detect_sample_scan(detect_pad_state_t *s, uint16_t raw,
                                                                                       uint16_t t_lo) {
    (void)s;
    (void)raw;
    (void)t_lo;
    asm volatile(
        ASM_ENTER_AT("detect_sample_scan_z")
        ASM_PUSH_SAMPLE
        /* (ASM_QUICK_MOVING comes in here: the sample in the history, base in r18:r19) */
        ".global detect_sample_scan_pushed\n"
        "detect_sample_scan_pushed:\n\t"
        /* the scan's end: the slow path */
        "ldd r24, Z+%[until]\n\t"
        "ldd r25, Z+%[until]+1\n\t"
        "movw r26, r20\n\t"
        "sub r26, r24\n\t"
        "sbc r27, r25\n\t"
        "brmi 1f\n"
        "8:\n\t" /* (the slow path: here, within the branches' reach) */
        "clr r24\n\t"
        "ret\n"
        "1:\n\t"
        /* at the rails: one more of the scan's samples there (at most 255) */
        "cpi r22, %[clip_lo] + 1\n\t"
        "cpc r23, __zero_reg__\n\t"
        "brlo 1f\n\t"
        "cpi r22, lo8(%[clip_hi])\n\t"
        "ldi r24, hi8(%[clip_hi])\n\t"
        "cpc r23, r24\n\t"
        "brlo 2f\n"
        "1:\n\t"
        "ldd r24, Z+%[rails]\n\t"
        "cpi r24, 255\n\t"
        "breq 2f\n\t"
        "inc r24\n\t"
        "std Z+%[rails], r24\n"
        "2:\n\t"
        /* e = raw - ((base + 8) >> 4) in r26:r27, a = |e| in r24:r25 */
        "movw r24, r18\n\t"
        "adiw r24, 8\n\t"
        "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t"
        "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t"
        "movw r26, r22\n\t"
        "sub r26, r24\n\t"
        "sbc r27, r25\n\t"
        "movw r24, r26\n\t"
        "sbrs r25, 7\n\t"
        "rjmp 1f\n\t"
        "com r25\n\t"
        "neg r24\n\t"
        "sbci r25, 0xFF\n"
        "1:\n\t"
        /* pd: e the contact's way (pol) */
        "ldd r0, Z+%[pol]\n\t"
        "sbrs r0, 7\n\t"
        "rjmp 1f\n\t"
        "com r27\n\t"
        "neg r26\n\t"
        "sbci r27, 0xFF\n"
        "1:\n\t"
        "ldd r0, Z+%[flags]\n\t"
        "sbrc r0, %[lobe_bit]\n\t"
        "rjmp 5f\n\t"
        /* within the first half-wave: not dated yet, or at its end (pd <= peak >> 3): the slow path */
        "sbrs r0, %[dated_bit]\n\t"
        "rjmp 8b\n\t"
        "ldd r18, Z+%[peak]\n\t"
        "ldd r19, Z+%[peak]+1\n\t"
        "lsr r19\n\t" "ror r18\n\t" "lsr r19\n\t" "ror r18\n\t" "lsr r19\n\t" "ror r18\n\t"
        "cp r18, r26\n\t"
        "cpc r19, r27\n\t"
        "brge 8b\n\t"
        /* under the last sample's: it turned back; else, if it had turned, risen past
         * twice its peak and the threshold: the slow path */
        "ldd r18, Z+%[last_pd]\n\t"
        "ldd r19, Z+%[last_pd]+1\n\t"
        "cp r26, r18\n\t"
        "cpc r27, r19\n\t"
        "brge 2f\n\t"
        "mov r18, r0\n\t"
        "ori r18, %[turned]\n\t"
        "std Z+%[flags], r18\n\t"
        "rjmp 3f\n"
        "2:\n\t"
        "sbrs r0, %[turned_bit]\n\t"
        "rjmp 10f\n\t"
        "ldd r18, Z+%[peak]\n\t"
        "ldd r19, Z+%[peak]+1\n\t"
        "lsl r18\n\t"
        "rol r19\n\t"
        "ldd r0, Z+%[thr]\n\t"
        "add r18, r0\n\t"
        "ldd r0, Z+%[thr]+1\n\t"
        "adc r19, r0\n\t"
        "cp r18, r26\n\t"
        "cpc r19, r27\n\t"
        "brge 10f\n\t"
        "rjmp 8b\n"
        "10:\n\t"
        /* a jump past all it reached (pd > last_pd + peak): a knee, maybe: the slow path */
        "ldd r18, Z+%[last_pd]\n\t"
        "ldd r19, Z+%[last_pd]+1\n\t"
        "ldd r0, Z+%[peak]\n\t"
        "add r18, r0\n\t"
        "ldd r0, Z+%[peak]+1\n\t"
        "adc r19, r0\n\t"
        "cp r18, r26\n\t"
        "cpc r19, r27\n\t"
        "brge 3f\n\t"
        "rjmp 8b\n"
        "3:\n\t"
        /* at the rails: the time since the last sample is the half-wave's there */
        "cpi r22, %[clip_lo] + 1\n\t"
        "cpc r23, __zero_reg__\n\t"
        "brlo 4f\n\t"
        "cpi r22, lo8(%[clip_hi])\n\t"
        "ldi r18, hi8(%[clip_hi])\n\t"
        "cpc r23, r18\n\t"
        "brlo 6f\n"
        "4:\n\t"
        "ldd r18, Z+%[last_t]\n\t"
        "ldd r19, Z+%[last_t]+1\n\t"
        "movw r22, r20\n\t"
        "sub r22, r18\n\t"
        "sbc r23, r19\n\t"
        "ldd r18, Z+%[clipped]\n\t"
        "ldd r19, Z+%[clipped]+1\n\t"
        "add r18, r22\n\t"
        "adc r19, r23\n\t"
        "std Z+%[clipped], r18\n\t"
        "std Z+%[clipped]+1, r19\n"
        "6:\n\t"
        "std Z+%[last_pd], r26\n\t"
        "std Z+%[last_pd]+1, r27\n\t"
        "std Z+%[last_t], r20\n\t"
        "std Z+%[last_t]+1, r21\n\t"
        "ldd r18, Z+%[base]\n\t"
        "ldd r19, Z+%[base]+1\n\t"
        "rjmp 7f\n"
        "5:\n\t"
        /* after it: past the ringing's level, or the low-passed deviation showed a push: the slow path */
        "ldd r20, Z+%[lvl_a]\n\t"
        "ldd r21, Z+%[lvl_a]+1\n\t"
        "cp r20, r24\n\t"
        "cpc r21, r25\n\t"
        "brlo 9f\n\t"
        "ldd r20, Z+%[ticked]\n\t"
        "cpi r20, 2\n\t"
        "brsh 9f\n\t"
        "ldd r20, Z+%[tmax]\n\t"
        "ldd r21, Z+%[tmax]+1\n\t"
        "cp r20, r24\n\t"
        "cpc r21, r25\n\t"
        "brsh 7f\n\t"
        "std Z+%[tmax], r24\n\t"
        "std Z+%[tmax]+1, r25\n"
        "7:\n\t"
        /* the rest on along its slope; the peak, the samples over the threshold, the envelope */
        ASM_REST_ON
        "ldd r20, Z+%[peak]\n\t"
        "ldd r21, Z+%[peak]+1\n\t"
        "cp r20, r26\n\t"
        "cpc r21, r27\n\t"
        "brge 1f\n\t"
        "std Z+%[peak], r26\n\t"
        "std Z+%[peak]+1, r27\n"
        "1:\n\t"
        "ldd r20, Z+%[thr]\n\t"
        "ldd r21, Z+%[thr]+1\n\t"
        "cp r24, r20\n\t"
        "cpc r25, r21\n\t"
        "brlo 1f\n\t"
        "ldd r20, Z+%[above]\n\t"
        "cpi r20, 255\n\t"
        "breq 1f\n\t"
        "inc r20\n\t"
        "std Z+%[above], r20\n"
        "1:\n\t"
        "ldd r20, Z+%[env]\n\t"
        "ldd r21, Z+%[env]+1\n\t"
        "cp r20, r24\n\t"
        "cpc r21, r25\n\t"
        "brsh 1f\n\t"
        "std Z+%[env], r24\n\t"
        "std Z+%[env]+1, r25\n"
        "1:\n\t"
        "ldi r24, 1\n\t"
        "ret\n"
        "9:\n\t"
        "clr r24\n\t"
        "ret\n\t" ::
        [base] "n"(offsetof(detect_pad_state_t, base_q4)), ASM_PUSH_OPERANDS,
        [until] "n"(offsetof(detect_pad_state_t, until_lo)), [pol] "n"(offsetof(detect_pad_state_t, pol)),
        [flags] "n"(offsetof(detect_pad_state_t, c.flags)), [lobe_bit] "I"(__builtin_ctz(DETECT_C_LOBE)),
        [dated_bit] "I"(__builtin_ctz(DETECT_C_DATED)), [turned_bit] "I"(__builtin_ctz(DETECT_C_TURNED)),
        [turned] "M"(DETECT_C_TURNED), [peak] "n"(offsetof(detect_pad_state_t, c.peak)),
        [last_pd] "n"(offsetof(detect_pad_state_t, last_pd)), [last_t] "n"(offsetof(detect_pad_state_t, last_t)),
        [thr] "n"(offsetof(detect_pad_state_t, thr)), [clip_lo] "M"(DETECT_CLIP_LO), [clip_hi] "n"(DETECT_CLIP_HI),
        [clipped] "n"(offsetof(detect_pad_state_t, c.clipped_us)), [lvl_a] "n"(offsetof(detect_pad_state_t, lvl_a)),
        [ticked] "n"(offsetof(detect_pad_state_t, ticked)), [tmax] "n"(offsetof(detect_pad_state_t, tick_max)),
        [slope] "n"(offsetof(detect_pad_state_t, slope_q8)), [above] "n"(offsetof(detect_pad_state_t, above)),
        [env] "n"(offsetof(detect_pad_state_t, env)), [rails] "n"(offsetof(detect_pad_state_t, c.rails)));
}
#endif

/* A pad at rest whose sample the fast path left: the noise floor's count,
 * a contact, or a faint shake. */
static COLD void rest_slow(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us) {
    int16_t e = deviation(raw, s->base_q4); /* (the fast path left the rest as it was) */
    uint16_t a = abs16(e);
    if (a < (uint16_t)(s->nf + GATE_MARGIN)) { /* the floor's count came round (tracked already) */
        if (s->nf) s->nf--;
        s->thr = rest_threshold(d, s, pad);
        /* (and a mask long over is forgotten before the clock could wrap past it) */
        if (s->reported && since(t_us, s->mask_end_us) >= 0) s->reported = 0;
        return;
    }
    if (a >= rest_threshold(d, s, pad)) {
        if (!take_work(d)) { /* next sample: the rest goes on as it went meanwhile */
            s->base_q4 = (int16_t)(s->base_q4 + (s->slope_q8 >> 4));
            s->busy = DEFERRED; /* (this sample is in the rise, whatever the next does) */
            return;
        }
        lp_start(s);
        start_contact(d, s, pad, e, raw, t_us);
        return;
    }
    /* Something small (a faint shake): the rest follows its mean. */
    if (s->busy == DEFERRED) s->busy = REST_COAST; /* (the start put off fell back: no rise) */
    track_mean_each(s);
}

/* (not COLD: a dispatcher, inline in its one caller on the AVR, the firmware's
 * sample_slow(), rather than a call and four saved registers more a slow sample) */
void detect_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us) {
    if (s->base_q4 < 0) { /* the first sample: the rest starts here */
        s->base_q4 = (int16_t)(raw << 4);
        s->slope_q8 = 0;
        for (uint8_t i = 0; i < DETECT_HIST; i++) {
            detect_hist_put(&s->hist[i], raw, (uint16_t)t_us);
        }
        return;
    }
    if (s->state == DETECT_REST) { /* in the history already (detect_sample_fast) */
        rest_slow(d, s, pad, raw, t_us);
        return;
    }
    /* (in the history, its low-passed deviation looked at: detect_sample_at) */
    moving_sample(d, s, pad, deviation(raw, s->base_q4), raw, t_us);
}

/* (LP_SLEW, LP_MARGIN, LP_FAST_SAMPLES: detect.h, the assembly's too) */
#define LP_FAST_SHIFT 3
#define LP_SLOW_SHIFT 5
/* On the AVR detect_sample_quick is in assembly (below the C), its moving
 * pad's part, the low-passed deviation included, the scan loop's inline
 * text too; detect_lp and this C detect_sample_quick are the host's, and
 * the assembly's reference in the fastpath test. */
#ifdef DETECT_FAST_ASM
#define QUICK_C detect_sample_quick_c
__attribute__((used, externally_visible, noinline)) uint8_t detect_sample_quick_c(detect_pad_state_t *s, uint16_t raw,
                                                                                   uint16_t t_lo);
#else
#define QUICK_C detect_sample_quick
#endif
/* The four-sums on by a sample (before it goes into the history): the
 * newest four (this one and three before it), and the one before; the
 * six newest samples weighted 1 2 3 3 2 1 back. */
static ALWAYS_INLINE uint16_t four_sums_on(detect_pad_state_t *s, uint16_t raw) {
    uint16_t s4 = (uint16_t)(s->s4[0] + raw - detect_hist_raw_back(s, 4));
    uint16_t lp_raw = (uint16_t)(s4 + s->s4[0] + s->s4[1]);
    s->s4[1] = s->s4[0];
    s->s4[0] = s4;
    return lp_raw;
}

uint8_t detect_lp(detect_pad_state_t *s, uint16_t raw) {
    uint16_t lp_raw = four_sums_on(s, raw);
    /* less 12 x the rest (x 16: 3/4 of base_q4, (3 b + 2) >> 2, which is
     * b - (b >> 2) - (b & 3 == 3) in 16 bits; a moving pad's rest has no slope) */
    int16_t b = s->base_q4;
    int16_t lp = (int16_t)(lp_raw - (uint16_t)(b - (b >> 2) - ((b & 3) == 3)));
    if (s->state == DETECT_SCAN && !(s->c.flags & DETECT_C_LOBE)) {
        /* its own push: the rest goes on along its slope, and the level is what it makes */
        uint16_t m = (uint16_t)(lp < 0 ? -lp : lp);
        if (m > s->lp_ref) s->lp_ref = m;
        return 0;
    }
    /* the rest, slowly after the low-passed deviation: a twelfth of it
     * (x 21 / 256, rounded), at most LP_SLEW counts */
    uint16_t mag = (uint16_t)(lp < 0 ? -lp : lp);
    uint8_t step = (uint8_t)(((mag > 255u ? 255u : mag) * 21u + 128u) >> 8);
    if (step > LP_SLEW) step = LP_SLEW;
    s->base_q4 = (int16_t)(s->base_q4 + (lp < 0 ? -16 : 16) * (int16_t)step);
    s->slope_q8 = 0;
    int8_t disc = s->disc;
    int16_t way = disc < 0 ? (int16_t)-lp : lp;
    uint16_t dir = disc ? (uint16_t)(way < 0 ? 0 : way) : mag;
    uint16_t ref = s->lp_ref;
    /* (the level plus a quarter in 32 bits, as on the host: past 65535 it is no push) */
    uint8_t push = s->ref_shift != REF_SHIFT_OWN && dir > (uint32_t)ref + (ref >> 2) + 12u * LP_MARGIN;
    if (push) {
        s->lp_ref = mag;
        return 4u;
    }
    ref = (uint16_t)(ref - (ref >> (s->since_lobe < LP_FAST_SAMPLES ? LP_FAST_SHIFT : LP_SLOW_SHIFT)));
    /* Step 30: in a contact's scan, for LP_FAST_SAMPLES after its first
     * half-wave (the scan is past it here), the level follows the
     * low-passed deviation up only where it goes against the way a hand
     * would push (the disc's, or while that is not known the contact's
     * own): a hand landing on a pad just shaken rises under it slowly, and
     * a level that followed it up never saw it pass. (On a ringing pad it
     * changed no push on the bench's tables: the assembly's ringing path
     * is spared it.) */
    int8_t hand = disc ? disc : s->pol;
    if (LP_HOLD && s->state == DETECT_SCAN && s->since_lobe < LP_FAST_SAMPLES &&
        (int8_t)(hand ^ (int8_t)((uint16_t)lp >> 8)) >= 0) {
        s->lp_ref = ref;
        return 0;
    }
    s->lp_ref = mag > ref ? mag : ref;
    return 0;
}

/* Every RING_TICK samples of a moving pad: the ringing's level decays (once
 * its first half-wave is over). (On the AVR in assembly, ASM_TICK, inline
 * in the scan loop and detect_sample_quick: this C version is the host's
 * and the assembly's reference in the fastpath test.) */
#ifdef DETECT_FAST_ASM
#define TICK_C detect_tick_c
__attribute__((used, externally_visible, noinline)) void detect_tick_c(detect_pad_state_t *s);
#else
#define TICK_C detect_tick
#endif
COLD void TICK_C(detect_pad_state_t *s) {
    if (s->state == DETECT_SCAN && !(s->c.flags & DETECT_C_LOBE)) {
        /* Within the first half-wave nothing new is looked for, and its
         * end sets the ringing's level. */
        s->tick = RING_TICK;
        return;
    }
    s->since_lobe = (uint8_t)(s->since_lobe > 255u - RING_TICK ? 255u : s->since_lobe + RING_TICK);
    follow_ring(s);
}

void detect_skip_sample(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
    (void)four_sums_on(s, raw); /* (then into the history, as a moving sample: ASM_MV_INTO_HIST_S4) */
    push_sample(s, raw, t_lo);
}

/* The newest sample of a contact's first half-wave (pd, its way; the
 * contact began at rest, where the rise's steps are its own) is a knee:
 * the two before it were both in the rise (a whole step of it), it climbed
 * more than twice that step, and the threshold's half, more, and the rise
 * before it was one pulse. */
static uint8_t knee_now(const detect_pad_state_t *s, int16_t pd) {
    /* (the three samples before the newest: 2, 3 and 4 back; the third only if it is needed) */
    int8_t pol = s->pol;
    int16_t p1 = dev_back(s, 2u, pol), p2 = dev_back(s, 3u, pol);
    int16_t lo = (int16_t)(gate(s) + (s->nf >> 2));
    int16_t before = (int16_t)(p1 - p2);
    if (p2 <= lo || before < 0 || pd - p1 <= 2 * before + RISE_STEP + (int16_t)(s->thr >> 1)) return 0;
    /* (and what came before it was one pulse, its steps shrinking: a rise
     * held back and let go, a neighbour's shake the other way over a
     * hand's push, has them growing, and its onset is where it began) */
    int16_t p3 = dev_back(s, 4u, pol);
    return p3 <= lo || before <= (p2 - p3) + RISE_STEP + (int16_t)(s->nf >> 2);
}

/* A sample's common work (detect.h): the fast path of a pad at rest, or
 * a moving pad's tick, its low-passed deviation and its state's fast path. */
uint8_t QUICK_C(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
    if (s->state == DETECT_REST) return detect_sample_fast(s, raw, t_lo);
    uint8_t ticked = 0;
    if (--s->tick == 0) {
        detect_tick(s); /* every RING_TICK samples */
        ticked = 1u;
    }
    s->ticked = (uint8_t)(ticked | detect_lp(s, raw));
    if (s->state != DETECT_SCAN) return detect_sample_ringing(s, raw, t_lo);
    if (s->ticked > 1u && (s->c.flags & DETECT_C_LOBE)) {
        /* (a push after the first half-wave: the slow path's, as detect_sample_scan would
         * leave it; the assembly leaves before it, so the sample is not counted at the rails) */
        push_sample(s, raw, t_lo);
        return 0;
    }
    return detect_sample_scan(s, raw, t_lo);
}

#ifdef DETECT_FAST_ASM
#if LP_FAST_SHIFT != 3 || LP_SLOW_SHIFT != 5
#error "detect_asm.h: ASM_QUICK_MOVING's shifts are LP_FAST_SHIFT's and LP_SLOW_SHIFT's"
#endif
#if RING_TICK != 4u
#error "detect_asm.h: ASM_TICK counts RING_TICK as 4"
#endif
#if !LP_HOLD
#error "detect_asm.h: step 30 is in ASM_MV_PUSH_DECAY; LP_HOLD=0 is the host core's only"
#endif
_Static_assert(offsetof(detect_pad_state_t, pol) - offsetof(detect_pad_state_t, disc) == DETECT_ASM_POL_FROM_DISC,
               "detect_asm.h: DETECT_ASM_POL_FROM_DISC is pol's offset from disc's");
/* detect_tick in assembly (ASM_TICK), for C's callers (detect_sample_quick_c). */
__attribute__((naked, noinline, used, externally_visible)) void detect_tick(detect_pad_state_t *s) {
    (void)s;
    asm volatile(
        "movw r30, r24\n\t"
        ASM_TICK
        "ret\n\t" ::
        ASM_QUICK_OPERANDS);
}

/* detect_sample_quick in assembly: at rest the fast path, else
 * ASM_QUICK_MOVING (the scan loop's text too) and the state's path, the
 * tick every RING_TICK samples in its own text (ASM_TICK keeps the
 * sample's registers: no call, nothing on the stack). */
__attribute__((naked, noinline, used, externally_visible)) uint8_t detect_sample_quick(detect_pad_state_t *s, uint16_t raw,
                                                                                        uint16_t t_lo) {
    (void)s;
    (void)raw;
    (void)t_lo;
    asm volatile(
        "movw r30, r24\n\t"
        "ldd r18, Z+%[state]\n\t"
        "tst r18\n\t"
        "brne 1f\n\t"
        "jmp detect_sample_fast\n"
        "1:\n\t"
        "push r20\n\t" /* (t_lo for SCAN's path: the low-passed deviation takes r20:r21) */
        "push r21\n\t"
        ASM_QUICK_MOVING("rjmp 58f\n" "57:\n\t",
                         "pop r21\n\t" "pop r20\n\t" "jmp detect_sample_scan_pushed\n\t",
                         "pop r0\n\t" "pop r0\n\t" "ldi r24, 1\n\t" "ret\n",
                         "pop r0\n\t" "pop r0\n\t" "clr r24\n\t" "ret\n")
        "58:\n\t" /* (the tick, out of the way of the branch over it) */
        ASM_TICK
        "rjmp 57b\n\t" ::
        ASM_QUICK_OPERANDS);
}
#endif

/* Step 34, at the end of a contact's first half-wave: its low-passed
 * deviation's largest there (lp_ref, x 12) marks a hand's push the size of
 * a slap (DETECT_C_PUSH), and on a pad that was moving raises the peak of
 * a contact off the rails whose half-wave was longer than a shake's to
 * what the push was (detect.h). A function of its own, so that
 * moving_sample's frame, on the stack's deepest path, does not grow. */
#if DETECT_SHAKE_LOBE_START_US != 256u
#error "size_push_by_lp divides by DETECT_SHAKE_LOBE_START_US / 8 as a shift of 5"
#endif
#if (DETECT_PUSH_LP_X64 && DETECT_PUSH_LP_X64 < 64u) || (DETECT_PUSH_LP_CLIPPED_X64 && DETECT_PUSH_LP_CLIPPED_X64 < 64u)
#error "size_push_by_lp's first test takes the size asked as at least the slap threshold (64/64)"
#endif
static COLD __attribute__((noinline)) void size_push_by_lp(const detect_t *d, detect_pad_state_t *s, uint8_t pad) {
    detect_contact_t *c = &s->c;
    uint16_t lp = s->lp_ref;
    /* (most first half-waves are shakes', their low-passed deviation far
     * under the size asked, which is at least the slap threshold, 8 times
     * it as lp_ref is kept, x 12: no multiply for them, in the image's
     * busiest scans) */
    if (lp >= (uint16_t)(d->pad[pad].slap << 3)) {
        uint8_t l8 = d->shake_lobe8 > DETECT_SHAKE_LOBE_START_US / 8u ? d->shake_lobe8 : (uint8_t)(DETECT_SHAKE_LOBE_START_US / 8u);
        uint8_t k = DETECT_CLIPPED(c) ? DETECT_PUSH_LP_CLIPPED_X64 : DETECT_PUSH_LP_X64;
        /* (no division either: 12 x the size asked, as lp_ref is kept:
         * the slap threshold x k / 64, x l8 / 32) */
        uint16_t least = (uint16_t)(((uint32_t)d->pad[pad].slap * k) >> 6);
        uint32_t least12 = ((uint32_t)least * (uint16_t)(12u * l8)) >> 5;
        /* (the filter spans six samples: at a shorter gap than the quiet
         * scan's a shake fills more of it, and the size asked grows as
         * much; the image's gaps are never shorter) */
        uint16_t gap = lobe_gap_us(s);
        if (gap && gap < DETECT_PUSH_LP_GAP_US) least12 = least12 * DETECT_PUSH_LP_GAP_US / gap;
        if (k && lp >= least12) c->flags |= DETECT_C_PUSH;
    }
#ifdef DETECT_DEBUG
    fprintf(stderr, "pad %u first half-wave over: onset %u lobe %u peak %u clipped %u clean %u low-passed %u%s\n", pad + 1,
            c->onset_us, c->lobe_us, c->peak, c->clipped_us, (c->flags & DETECT_C_CLEAN) != 0, lp / 12u,
            (c->flags & DETECT_C_PUSH) ? " PUSH" : "");
#endif
    /* 1.5 x lp_ref / 12 */
    if (DETECT_PUSH_LP_PEAK && !(c->flags & (DETECT_C_CLEAN | DETECT_C_WRONG)) && !DETECT_CLIPPED(c) && (lp >> 3) > c->peak &&
        c->lobe_us > detect_sharp_us(d))
        c->peak = lp >> 3;
}

/* Step 36, at the end of a contact's first half-wave (after step 34's
 * size): whether it peaked late in it, while the history still holds the
 * peak (the walk back only for the few contacts step 36 may judge: off the
 * rails, within the overlap's band over the sharp limit, from the slap
 * threshold to DETECT_LATE_PEAK_MAX_X2 / 2 times it). A function of its own,
 * called beside size_push_by_lp: no deeper on the stack than it. */
static COLD __attribute__((noinline)) void note_late_peak(const detect_t *d, detect_pad_state_t *s, uint8_t pad) {
    const detect_contact_t *c = &s->c;
    uint16_t sharp_us = detect_sharp_us(d), slap = d->pad[pad].slap, lobe = c->lobe_us;
    s->marks &= (uint8_t)~DETECT_M_LATE_PEAK;
    if (DETECT_LATE_PEAK && DETECT_OVERLAP_X10 && !DETECT_CLIPPED(c) && c->peak >= slap &&
        (uint16_t)(2u * c->peak) < (uint16_t)(DETECT_LATE_PEAK_MAX_X2 * slap) && lobe > sharp_us && lobe <= (uint16_t)(sharp_us + DETECT_OVERLAP_LOBE_US))
        if (rise_to_peak_us(s) >= (uint16_t)(lobe - (lobe >> 3) - (lobe >> 5))) /* (27/32 of it: 84 %) */
            s->marks |= DETECT_M_LATE_PEAK;
}

static COLD void moving_sample(detect_t *d, detect_pad_state_t *s, uint8_t pad, int16_t e, uint16_t raw, uint32_t t_us) {
    uint16_t a = abs16(e);
    int8_t disc = s->disc;
    uint8_t rise = a > s->lvl_a;
    if (!rise && a > s->tick_max) s->tick_max = a;
    if (disc && (e < 0 ? -1 : 1) != disc) rise = 0; /* a hand pushes the disc's way only */
    /* (detect_sample_at counted the tick and did its work, the ringing's level; detect_lp moved the rest) */
    uint8_t ticked = s->ticked & 1u;
    if (s->ticked & 4u) rise = 1; /* (the low-passed deviation showed a push, the disc's way) */
    if (s->state == DETECT_SCAN ? (s->c.flags & DETECT_C_LOBE) != 0 : !ticked)
        s->base_q4 = (int16_t)(s->base_q4 + (s->slope_q8 >> 4)); /* the rest goes on as it went */
    if (s->state == DETECT_RING) {
        /* A new contact, masked or not: inside a reported contact's mask it
         * is not reported (unless it is far louder), but other pads'
         * contacts may still be its shake. */
        if (rise && take_work(d)) {
            start_contact(d, s, pad, e, raw, t_us);
            return;
        }
        /* back at rest once the level and what the last tick saw are both within two gates */
        if (ticked && s->ref < 2u * gate(s) && s->last_tick_max < 2u * gate(s)) {
            s->state = DETECT_REST;
            s->busy = 0;
        }
        return;
    }
    /* SCAN, PENDING */
    int16_t pd = s->pol < 0 ? (int16_t)-e : e; /* (pol is +1 or -1 here: a negation, not a multiply) */
    uint8_t lobe_now = 0;
    if (s->state == DETECT_SCAN) {
        if (!(s->c.flags & DETECT_C_LOBE)) s->base_q4 = (int16_t)(s->base_q4 + (s->slope_q8 >> 4));
        if (!(s->c.flags & DETECT_C_DATED)) {
            date_onset(s, ++s->busy);
            s->until_lo = (uint16_t)(s->c.onset_us + d->pad[pad].scan_us);
        }
        if ((s->c.flags & (DETECT_C_LOBE | DETECT_C_TURNED | DETECT_C_DATED | DETECT_C_CLEAN)) == (DETECT_C_DATED | DETECT_C_CLEAN) &&
            knee_now(s, pd) && since(t_us, s->c.onset_us) <= (int32_t)DETECT_XT_LOBE_US &&
            take_work(d)) {
            /* A step far steeper than the rise's before it, where a
             * half-sine's steps only shrink: a hand landing on a pad a
             * neighbour's shake had just set moving. The contact starts
             * afresh here, as from rest (the walk back stops at the knee).
             * Not after a rise longer than any shake's first half-wave:
             * that was a slow hand's, and the step a shake's swing over it. */
            s->state = DETECT_REST;
            start_contact(d, s, pad, e, raw, t_us);
            return;
        }
        uint8_t landed = 0;
        if ((s->c.flags & (DETECT_C_LOBE | DETECT_C_TURNED)) == DETECT_C_TURNED && pd > (int16_t)(2u * s->c.peak + s->thr)) {
            /* Risen again, to more than twice what the first half-wave
             * reached before it turned. If that half-wave was a slap's and
             * rose more slowly than a shake's does (step 26), it was a
             * hand's, and what lands on it now a neighbour's shake: the
             * hand's half-wave ends here, and its contact goes on. */
            if (DETECT_SLOW_RISE_KEEPS && s->c.peak >= d->pad[pad].slap &&
                rise_to_peak_us(s) > detect_sharp_us(d) / 2u) {
                landed = 1;
            } else if (take_work(d)) {
                /* Else the half-wave was a neighbour's shake, and a hand
                 * lands now. It starts afresh, as from rest (the walk back
                 * stops at the turn). */
                s->state = DETECT_REST;
                start_contact(d, s, pad, e, raw, t_us);
                return;
            }
        }
        int16_t lobe_end = (int16_t)(s->c.peak >> LOBE_END_SHIFT);
        if (!(s->c.flags & DETECT_C_LOBE) && (pd <= lobe_end || landed)) {
            /* Back (nearly) through rest: the first half-wave is over, where
             * the line from the last sample to this one crossed the level (to
             * a quarter of the gap: no division in the sample's path); cut
             * short by a shake landing on it: at the last sample before. */
            uint16_t dt = (uint16_t)((uint16_t)t_us - s->last_t), part = 0;
            if (s->last_pd > lobe_end && !landed) {
                uint16_t above = (uint16_t)(s->last_pd - lobe_end), fall = (uint16_t)(s->last_pd - pd);
                for (uint8_t k = 1; k < 4u && above * 4u > fall * k; k++) part = (uint16_t)(part + (dt >> 2));
            }
            uint32_t tz = t_us - dt + part;
            int32_t lobe = since(tz, s->c.onset_us);
            s->c.lobe_us = (uint16_t)(lobe < 0 ? 0 : lobe > 0xFFFE ? 0xFFFE : lobe);
            s->c.flags |= DETECT_C_LOBE;
            s->lobe_gap4 = (uint8_t)(dt >= 1020u ? 255u : (dt + 2u) >> 2); /* (the crossing is known to within it) */
            lobe_now = 1;
        }
    }
    if (s->c.flags & DETECT_C_LOBE) {
        if (lobe_now) { /* the ringing's level starts at the first half-wave's peak */
            uint16_t p = estimated_peak(&s->c);
            uint8_t wrong = (s->c.flags & DETECT_C_WRONG) != 0;
            /* (against the disc, a swing the disc's way now may be the hand's: the level is the shake's alone) */
            s->ref = p > a || wrong ? p : a;
            /* (step 17: at most what a sample can show, the rails: an estimated
             * peak over them kept every new contact out for as long as the
             * level took to decay to them, ~5 ms after a hard shake) */
            int16_t b = (int16_t)-deviation(0, s->base_q4); /* (the rest, in counts) */
            uint16_t most = (uint16_t)(b > 511 ? b : 1023 - b);
            if (s->ref > most) s->ref = most;
            s->ref_shift = REF_SHIFT_SHAKE;
            s->since_lobe = 0;
            set_levels(s);
            rise = wrong && a > s->lvl_a && (e < 0 ? -1 : 1) == disc;
            size_push_by_lp(d, s, pad);
            note_late_peak(d, s, pad);
        }
        /* A rise the ringing of this contact's first half-wave cannot
         * explain: a slap on a pad a neighbour had just shaken. If what came
         * so far could be that shake, this is where the player's contact
         * starts (judged on the contact before this sample). */
        if (rise && (s->c.flags & DETECT_C_WRONG) && take_work(d)) {
            start_contact(d, s, pad, e, raw, t_us); /* (the shake went against the disc: a hand now) */
            return;
        }
        if (rise && take_work(d)) {
            uint8_t src = crosstalk_source(d, s, pad);
            if (src != 0xFFu) {
                s->xt_pad = (uint8_t)(src | DETECT_XT_AT_RESTART);
                s->xt_onset_lo = (uint16_t)xt_source_onset;
                s->xt_peak = estimated_peak(&s->c);
                s->c.flags |= DETECT_C_XTALK;
                start_contact(d, s, pad, e, raw, t_us);
                return;
            }
        }
    }
    if (a > s->env) s->env = a;
    if (s->state == DETECT_SCAN) {
        if (a >= s->thr && s->above < 255u) s->above++;
        if (!(s->c.flags & DETECT_C_LOBE) && at_rail(raw))
            s->c.clipped_us = (uint16_t)(s->c.clipped_us + (uint16_t)((uint16_t)t_us - s->last_t));
        /* (a first half-wave that turned back, as the fast path sees it) */
        if ((s->c.flags & (DETECT_C_LOBE | DETECT_C_DATED)) == DETECT_C_DATED && pd > (int16_t)(s->c.peak >> LOBE_END_SHIFT) &&
            pd < s->last_pd)
            s->c.flags |= DETECT_C_TURNED;
        if (pd > (int16_t)s->c.peak) s->c.peak = (uint16_t)pd;
        s->last_pd = pd;
        s->last_t = (uint16_t)t_us;
        /* The scan's end; before it, a push the low-passed deviation showed
         * after the first half-wave, which left the fast path before its
         * count at the rails, is counted there (step 14's count is of every
         * sample of the scan). */
        if ((int16_t)((uint16_t)t_us - s->until_lo) >= 0) end_scan(d, s);
        else if ((s->ticked & 4u) && (s->c.flags & DETECT_C_LOBE) && at_rail(raw) && s->c.rails < 255u)
            s->c.rails++;
    }
}

/* The least share of a first half-wave (a half-sine), in %, that a slap
 * spends at the rails if a shake of at most xtalk % of it reaches them:
 * (2 / pi) acos(xtalk / 100), 2/3 at the default 50 %. In three straight
 * pieces that stay under it (by at most 3 up to 80 %, 10 at 95 %): a
 * lower share only lets more contacts be shakes. */
static uint8_t clipping_share_pct(uint8_t xtalk) {
    if (xtalk <= 50u) return (uint8_t)(100u - (2u * xtalk + 2u) / 3u);
    if (xtalk <= 80u) return (uint8_t)(66u - (6u * (xtalk - 50u) + 6u) / 7u);
    return xtalk >= 100u ? 0u : (uint8_t)(40u - 2u * (xtalk - 80u));
}

/* Whether a contact c (of pad state s, estimated peak over its ringing
 * `mine`) fits under os's contact o as its shake, by their peaks (src: o's
 * estimated peak) and, both at the rails, by their shares of the first
 * half-wave there (share: clipping_share_pct(xtalk), worked out once a
 * decision): crosstalk_source()'s checks that need a multiply, out of its
 * loop. */
static COLD uint8_t shake_fits(const detect_pad_state_t *s, const detect_pad_state_t *os, uint16_t mine, uint16_t src,
                               uint8_t xtalk, uint8_t share) {
    const detect_contact_t *c = &s->c, *o = &os->c;
    if (DETECT_CLIPPED(c)) {
        /* At the rails both: their peaks are estimates, and a shake
         * clips no longer than the slap that made it (each counted in
         * its own pad's sample gaps, which in a paced burst differ by
         * tens of us: step 20's tolerance, for a shake that began soon
         * after its source). */
        /* (tol is worked out before the early return below: after it,
         * avr-gcc keeps a 14-byte frame here instead of 7, and this is
         * on the stack's deepest path) */
        uint16_t tol = since(c->onset_us, o->onset_us) < (int32_t)DETECT_XT_CLIP_NEAR_US ? DETECT_XT_CLIP_TOL_US : 0u;
        if (!DETECT_CLIPPED(o)) return 0; /* a shake is smaller than its slap */
        if ((uint32_t)o->clipped_us + tol < c->clipped_us) return 0; /* ... and clips no longer */
        /* ... and rings no longer there (step 14), in time: its samples
         * at the rails in its scan, each worth the pad's gap at its first
         * half-wave's end (step 21: later in a paced burst a pad is
         * sampled less often, and a hand ringing as long at the rails
         * counted fewer samples there than the slap before it); in
         * samples if either gap is not known yet */
        uint8_t gc = s->lobe_gap4, go = os->lobe_gap4; /* (4 us units: bytes, 16-bit products, a light frame) */
        if (!(o->flags & c->flags & DETECT_C_LOBE) || !gc || !go) gc = go = 1u;
#if DETECT_XT_RAILS_MARGIN == 0
        if ((uint16_t)(c->rails * gc) > (uint16_t)(o->rails * go)) return 0;
#else /* (a margin: 255 turns the rule off) */
        if (DETECT_XT_RAILS_MARGIN < 255u && (uint32_t)c->rails * gc > (uint32_t)(o->rails + DETECT_XT_RAILS_MARGIN) * go) return 0;
#endif
        /* A shake at most xtalk % of its slap reaches the rails only if the
         * slap reached them xtalk-fold, so a slap whose first half-wave is
         * over, begun at rest (its onset sure), that spent too little of it
         * at the rails shook nothing up to them. Counted generously: its
         * time there plus a sample gap (each sample at the rails counts the
         * gap before it), over its length less half a gap (its onset and
         * end are each dated to about half a gap). */
        if ((o->flags & (DETECT_C_CLEAN | DETECT_C_LOBE)) == (DETECT_C_CLEAN | DETECT_C_LOBE)) {
            uint16_t gap = lobe_gap_us(os), half = (uint16_t)(gap >> 1);
            if (o->lobe_us > half &&
                (uint32_t)(o->clipped_us + gap) * 100u < (uint32_t)share * (uint16_t)(o->lobe_us - half))
                return 0;
        }
        /* A first half-wave of one sample, at the rails, has no share
         * to measure (it is all at the rails, whatever its peak): a
         * shake's, as short as that. */
        if (c->lobe_us > lobe_gap_us(s) && c->lobe_us >= CLIP_HAND_LOBE_US) {
            /* the share of the first half-wave at the rails grows with the peak */
            uint16_t lc = c->lobe_us < c->clipped_us ? c->clipped_us : c->lobe_us;
            uint16_t lo = (o->flags & DETECT_C_LOBE) ? o->lobe_us : (uint16_t)since(c->onset_us, o->onset_us);
            if (lo < o->clipped_us) lo = o->clipped_us;
            /* fc > fs + CLIP_SHARE_MARGIN/256, cross-multiplied (no division) */
            if (((uint32_t)c->clipped_us * lo) << 8 > (((uint32_t)o->clipped_us * lc) << 8) + (uint32_t)CLIP_SHARE_MARGIN * lc * lo)
                return 0;
        }
    } else if (!DETECT_CLIPPED(o) && (uint32_t)mine * 100u > (uint32_t)src * xtalk) {
        return 0; /* (a slap at the rails is louder than its estimate: any unclipped shake fits under it) */
    }
    return 1;
}

/* Whether a contact dropped as src's shake on pad q could only have been
 * that: no other contact (bar shakes) began on any pad within the 3.4 ms
 * that vibration needs before it (at: its onset). */
static uint8_t only_source(const detect_t *d, uint8_t q, uint8_t src, uint16_t at) {
    const detect_pad_state_t *os = d->st;
    for (uint8_t r = 0; r < d->npads; r++, os++) {
        if (r == q || r == src || (os->c.flags & (DETECT_C_LIVE | DETECT_C_XTALK)) != DETECT_C_LIVE) continue;
        /* (16-bit times, as learn_pair_delay's: began from 3.4 ms before to just after it) */
        if ((uint16_t)(at + DETECT_XT_EARLY_US - (uint16_t)os->c.onset_us) < (uint16_t)(XT_DELAY_MAX_US + XT_LATE_US + DETECT_XT_EARLY_US))
            return 0;
    }
    return 1;
}

/* A contact of pad q (state s), off the rails, dropped as the shake of
 * src's contact: if it could have been no other slap's shake, and is the
 * smallest such shake that slap made so far, src remembers when and how
 * large it came (louder_than_its_shake). */
static COLD void note_sure_shake(detect_t *d, const detect_pad_state_t *s, uint8_t q, uint8_t src) {
    detect_pad_state_t *os = &d->st[src];
    /* (16-bit times: a shake that counts began within 4 ms of its slap) */
    uint16_t gap = (uint16_t)((uint16_t)s->c.onset_us - (uint16_t)xt_source_onset);
    if (gap >= 255u * DETECT_SHAKE_UNIT_US || (uint32_t)os->c.onset_us != xt_source_onset) return;
    /* (its largest swing either way: a short half-wave's peak falls between samples) */
    uint16_t size = s->env > s->c.peak ? s->env : s->c.peak;
    uint8_t size4 = (uint8_t)(size > 4u * 255u ? 255u : (size + 3u) / 4u);
    if (os->shake_gap && size4 >= os->shake_size) return; /* (the smallest tells the most) */
    if (!only_source(d, q, src, (uint16_t)s->c.onset_us)) return;
    os->shake_gap = (uint8_t)(gap / DETECT_SHAKE_UNIT_US + 1u); /* (a power of two: a shift) */
    os->shake_size = size4;
}

/* Whether s's contact, beginning gap us after the contact of os (another
 * pad's), is larger than that slap's shake can be here: more than
 * DETECT_XT_NEARER_X10 / 10 times a shake it surely made on a pad it
 * reached DETECT_XT_NEARER_US sooner (vibration weakens as it travels: a
 * pad it reaches later is no nearer, and shaken no harder). */
static COLD uint8_t louder_than_its_shake(const detect_pad_state_t *s, const detect_pad_state_t *os, int32_t gap) {
    if (!os->shake_gap || (int32_t)(os->shake_gap - 1u) * DETECT_SHAKE_UNIT_US > gap - (int32_t)DETECT_XT_NEARER_US) return 0;
    /* (16-bit sums: a peak and a threshold are within the ADC's 1023 counts) */
    uint16_t mine = DETECT_CLIPPED(&s->c) ? (uint16_t)RAIL_DEV : s->c.peak;
    return (uint16_t)(mine * 10u) > (uint16_t)(os->shake_size * (4u * DETECT_XT_NEARER_X10) + 10u * s->thr);
}

/* Step 32: whether the shake s last put down to o's contact (s->xt_pad's,
 * s->xt_peak) stands for o's shake of this pad. A shake put down at a
 * restart (DETECT_XT_AT_RESTART: the first contact was cut short by a rise
 * its ringing could not explain, its peak only what it had reached so far)
 * that was under 1/DETECT_SHAKE_ONCE_RATIO of o's estimated peak does not,
 * for a contact off the rails: the loudest of the candidates that began
 * about as soon is taken, and so small a start was most likely a quieter
 * slap's shake, with o's own still to come (the contact judged now). At
 * the rails the contact is rather a player's slap on a pad just shaken,
 * and step 27 keeps it from the source of that shake. Asked once a look,
 * of the source s remembers, before the looks' loop. */
static COLD uint8_t shook_it_before(const detect_pad_state_t *s, const detect_contact_t *o) {
    if (!DETECT_SHAKE_ONCE_RATIO || !(s->xt_pad & DETECT_XT_AT_RESTART) || DETECT_CLIPPED(&s->c)) return 1;
    return (uint32_t)s->xt_peak * DETECT_SHAKE_ONCE_RATIO >= estimated_peak(o);
}

/* What crosstalk_source() judges every other pad's contact by (worked
 * out once a look), and the likeliest source so far. */
typedef struct {
    uint32_t onset;
    int32_t xwin;
    uint16_t mine, best_src;
    uint16_t louder; /* step 13: a contact at least this loud before it makes it a shake by size and time (0: none looked for, or found) */
    uint8_t xtalk, share, loud, again_pad, best, best_before; /* again_pad: step 27's source (0xFF: none) */
} xt_look_t;

/* Step 13: a contact off the rails that is DETECT_SHAKE_LOBE_RATIO times
 * smaller than a contact on another pad that began DETECT_XT_EARLY_US to
 * xwin_us before it is a shake by size and time alone (a player's slap
 * that much quieter than one just before it is rare; every slap shakes
 * seven pads): its first half-wave moves the table's learnt one, a running
 * median, a step towards it. What is sharp then follows the table's own
 * shakes, however slow its top or its ringing makes them. Contacts on a
 * moving pad count too: on a table that rings long and low, few shakes
 * find a pad at rest, and their first half-waves carry the ringing's.
 * How loud a contact before it must be (0: c is no such shake). */
static uint16_t shake_by_size(const detect_contact_t *c) {
    if (!(c->flags & DETECT_C_LOBE) || DETECT_CLIPPED(c)) return 0;
    return (uint16_t)(DETECT_SHAKE_LOBE_RATIO * c->peak); /* (off the rails: its peak is measured) */
}

/* Whether o, which began gap us before (at most xwin_us: the caller's
 * check), is loud enough (k->louder) to make the contact a shake by size
 * and time (the cheap test first: a clipped contact's estimate only adds
 * to its peak). */
static ALWAYS_INLINE uint8_t louder_before(const detect_contact_t *o, int32_t gap, const xt_look_t *k) {
    return gap > (int32_t)DETECT_XT_EARLY_US &&
           (o->peak >= k->louder || (DETECT_CLIPPED(o) && estimated_peak(o) >= k->louder));
}

/* The learnt first half-wave, a step towards c's (never past it). */
static COLD void learn_shake_lobe(detect_t *d, const detect_contact_t *c) {
    uint8_t l8 = c->lobe_us > 255u * 8u ? 255u : (uint8_t)(c->lobe_us >> 3);
    uint8_t m = d->shake_lobe8, step = DETECT_SHAKE_LOBE_STEP_US / 8u;
    if (l8 > m) m = l8 - m > step ? (uint8_t)(m + step) : l8;
    else m = m - l8 > step ? (uint8_t)(m - step) : l8;
    d->shake_lobe8 = m;
}

/* One look through the other pads' contacts for c's source: those with
 * flags LIVE | doubted (doubted: 0, or DETECT_C_XTALK for the contacts
 * dropped as shakes at the rails that may have been slaps: d->doubted's
 * pads). Inlined into both looks: the first, on every decision, stays
 * as quick as a single one. */
static inline __attribute__((always_inline)) void look_for_source(const detect_t *d, const detect_pad_state_t *s, uint8_t pad,
                                                                  xt_look_t *k, uint8_t doubted) {
    const detect_pad_state_t *os = d->st;
    for (uint8_t j = 0; j < d->npads; j++, os++) {
        const detect_contact_t *o = &os->c;
        if ((o->flags & (DETECT_C_LIVE | DETECT_C_XTALK)) != (DETECT_C_LIVE | doubted) || j == pad) continue;
        if (doubted && !(d->doubted & (uint8_t)(1u << j))) continue;
        int32_t gap = since(k->onset, o->onset_us); /* > 0: the other came first */
        if (gap < (int32_t)DETECT_XT_MIN_DELAY_US - (int32_t)DETECT_XT_EARLY_US || gap > k->xwin) continue; /* (both onsets are dated to about half a sample) */
        if (!doubted && k->louder && louder_before(o, gap, k)) k->louder = 0; /* (step 13: found) */
        if (doubted && gap > (int32_t)DETECT_XT_DOUBT_US) continue;
        {
            int32_t delay = XT_DELAY_MAX_US;
            uint8_t known = d->pair_delay[pair_slot(j, pad)];
            if (known & DETECT_PAIR_KNOWN) {
                /* (learnt, and dated as this contact is: a margin either way.
                 * Sooner counts on a moving pad too (step 24), where an onset
                 * may be dated up to 0.3 ms early: a few more false slaps,
                 * fewer players dropped once the pairs are known) */
                delay = (int32_t)(known & 0x7Fu) * DETECT_PAIR_UNIT_US;
                if (gap < delay - DETECT_PAIR_EARLY_US && (DETECT_PAIR_MOVING || (s->c.flags & DETECT_C_CLEAN))) {
                    XT_WHY("   pad %u vs source %u: pair early (gap %d, learnt delay %d)\n", pad + 1, j + 1, (int)gap, (int)delay);
                    continue;
                }
                delay += DETECT_PAIR_LATE_US;
            }
#ifdef DETECT_ORACLE
            /* (the table's true delay between the two: no contact much sooner is its shake) */
            if (d->oracle_delay[j][pad]) {
                delay = d->oracle_delay[j][pad];
                if (gap < delay - 250) continue;
            }
#endif
            /* Its shake arrived here long before this contact began: this
             * can be no more than that shake's ringing, no louder than the
             * ringing it rose out of. */
            if (gap > delay + XT_LATE_US && k->loud) {
                XT_WHY("   pad %u vs source %u: late (gap %d, delay at most %d)\n", pad + 1, j + 1, (int)gap, (int)delay);
                continue;
            }
        }
        /* louder than the shake it already made */
        if (j == k->again_pad && (uint16_t)o->onset_us == s->xt_onset_lo) {
#ifdef DETECT_DEBUG
            fprintf(stderr, "   pad %u vs source %u: it shook the pad already (step 27: its shake %u, put down at a restart %u)\n",
                    pad + 1, j + 1, s->xt_peak, (s->xt_pad & DETECT_XT_AT_RESTART) != 0);
#endif
            continue;
        }
        detect_work_goes_on(); /* (a look at each candidate, a few hundred cycles: the image may pace on) */
        uint16_t src = estimated_peak(o);
#ifdef DETECT_DEBUG
        fprintf(stderr, "   pad %u vs source %u: gap %d, mine %u (clipped %u), src %u (clipped %u)\n", pad + 1, j + 1,
                (int)gap, k->mine, s->c.clipped_us, src, o->clipped_us);
#endif
        if (!shake_fits(s, os, k->mine, src, k->xtalk, k->share)) continue;
        if (louder_than_its_shake(s, os, gap)) {
#ifdef DETECT_DEBUG
            fprintf(stderr, "   pad %u vs source %u: larger than its sure shake allows (%u x 4, %u us in)\n", pad + 1, j + 1,
                    os->shake_size, (os->shake_gap - 1u) * DETECT_SHAKE_UNIT_US);
#endif
            continue;
        }
        if (bound_rules_out(d, j, pad, gap, k->loud)) { /* (last: a source that fits in every other way) */
            XT_WHY("   pad %u vs source %u: bound rule (gap %d)\n", pad + 1, j + 1, (int)gap);
            continue;
        }
#ifdef DETECT_ORACLE
#ifndef ORACLE_COUPLING_X10
#define ORACLE_COUPLING_X10 30u /* (3 x) */
#endif
        /* (the table's true coupling: a contact at the rails is no shake of a
         * slap whose shake here, at three times the coupling times the slap's
         * estimated peak, stays off them) */
        if (d->oracle_coupling[j][pad] && DETECT_CLIPPED(&s->c) && (uint32_t)src * d->oracle_coupling[j][pad] * ORACLE_COUPLING_X10 < 480u * 10000u)
            continue;
#endif
        /* Of all that can explain it, the likeliest: one that clearly came
         * first (vibration takes time to cross), then the loudest. It is
         * what the pad remembers as its shake's source ("again" above): a
         * quiet neighbour that merely began at the same moment would make
         * the loud one's shake, arriving later, look louder than the shake
         * it had made, and a false slap. */
        uint8_t before = gap > (int32_t)DETECT_XT_EARLY_US;
        if (k->best == 0xFFu || before > k->best_before || (before == k->best_before && src > k->best_src)) {
            k->best = j;
            k->best_before = before;
            k->best_src = src;
            xt_source_onset = o->onset_us;
        }
    }
}

/* Another pad's contact that explains this pad's as its shake: it began at
 * least DETECT_XT_MIN_DELAY_US and at most xwin_us before it, this one is
 * sharp (a lobe within DETECT_XT_LOBE_US) and at most xtalk % of it. A
 * slap that shook the pad already explains no more than its ringing, nor
 * does one whose vibration arrived long before this began. Of several, the
 * likeliest: one that clearly came first, then the loudest. A contact
 * dropped as a shake itself is one only at the rails, and only if no other
 * contact is (step 12). 0xFF: none. The source's onset goes to
 * xt_source_onset. (s: pad's state, d->st[pad].) */
static uint8_t crosstalk_source(detect_t *d, const detect_pad_state_t *s, uint8_t pad) {
    const detect_contact_t *c = &s->c;
    const detect_pad_config_t *cfg = &d->pad[pad];
    xt_look_t k;
    k.xtalk = cfg->xtalk;
    if (k.xtalk == 0) return 0xFFu;
    uint16_t peak = estimated_peak(c), louder = shake_by_size(c);
    k.xwin = (int32_t)cfg->xwin_us;
    k.louder = louder;
    /* A hand's push (a light one's shape is not sure: three or four samples, a ringing on them),
     * unless it is a swell of the pad's ringing (step 22) */
    if (!sharp(c) && peak >= cfg->slap && !ringing_swell(s, c, peak)) {
        /* (step 13: unless a louder contact just before makes it a shake all the same; a
         * look of its own, the cheap checks only: hands are few, and so are shakes this slow.
         * Step 28: a first half-wave at most DETECT_OVERLAP_LOBE_US longer than a shake's, off
         * the rails, far quieter than a contact just before, was the shakes of two or three
         * slaps overlapping: judged as a shake, by the look below) */
        /* (overlap: 0 not asked, 1 a loud contact still looked for, 2 found) */
        uint8_t overlap = DETECT_OVERLAP_X10 && !DETECT_CLIPPED(c) && (c->flags & DETECT_C_LOBE) &&
                          c->lobe_us <= (uint16_t)(detect_sharp_us(d) + DETECT_OVERLAP_LOBE_US);
        if (louder || overlap) {
            const detect_pad_state_t *os = d->st;
            for (uint8_t j = 0; j < d->npads; j++, os++) {
                const detect_contact_t *o = &os->c;
                if ((o->flags & (DETECT_C_LIVE | DETECT_C_XTALK)) != DETECT_C_LIVE || j == pad) continue;
                int32_t gap = since(c->onset_us, o->onset_us);
                if (gap > k.xwin) continue;
                if (louder && louder_before(o, gap, &k)) {
                    learn_shake_lobe(d, c);
                    louder = 0; /* (learnt: not again below) */
                }
                if (overlap == 1u && gap > (int32_t)DETECT_XT_EARLY_US &&
                    (uint32_t)estimated_peak(o) * 10u >= (uint32_t)peak * DETECT_OVERLAP_X10)
                    overlap = 2u;
                if (!louder && overlap != 1u) break;
            }
        }
        if (overlap == 1u && (s->marks & DETECT_M_LATE_PEAK)) overlap = 2u; /* (step 36: shakes overlapping, by their shape) */
        if (overlap != 2u) {
            XT_WHY("   pad %u vs source -: not sharp (lobe %u gap %u sharp %u)\n", pad + 1, c->lobe_us, lobe_gap_us(s),
                   detect_sharp_us(d));
            return 0xFFu;
        }
    }
    if (c->flags & DETECT_C_PUSH) { /* a push the size of a slap (step 34) */
        XT_WHY("   pad %u vs source -: push (step 34)\n", pad + 1);
        return 0xFFu;
    }
    if (c->clipped_us > DETECT_XT_CLIP_MAX_US) { /* longer at the rails than any shake */
        XT_WHY("   pad %u vs source -: clip max (%u us at the rails)\n", pad + 1, c->clipped_us);
        return 0xFFu;
    }
    k.mine = peak;
    k.share = 0; /* (step 11's, for a contact at the rails: a division, once) */
    if (!DETECT_CLIPPED(c)) k.mine = k.mine > s->under ? (uint16_t)(k.mine - s->under) : 0u;
    else k.share = clipping_share_pct(k.xtalk);
    /* (what does not depend on the other pad, worked out once: most pads
     * are out at the loop's first checks) louder than the ringing it rose
     * out of, louder than the shake it last had (step 27: over half of
     * it, above the ringing it rose out of; 2.22.0's rule: an eighth over it) */
    k.loud = peak > s->under + (s->under >> 2) + 2u * s->thr;
#if DETECT_SHAKE_ONCE
    uint8_t again = k.mine > (s->xt_peak >> 1);
#else
    uint8_t again = k.mine > s->xt_peak + (s->xt_peak >> 3);
#endif
    /* (the pad it is louder than the shake from, if that shake stands for
     * its contact's (step 32: asked of the pad's contact now; if that is
     * not the one that shook it, the look's onset test rules it out
     * anyway): 0xFF for none. Worked out here, once, and not in the look's
     * loop, where the call made the frame 2 bytes bigger) */
    uint8_t xt = (uint8_t)(s->xt_pad & (uint8_t)~DETECT_XT_AT_RESTART);
    k.again_pad = again && xt < d->npads && shook_it_before(s, &d->st[xt].c) ? xt : 0xFFu;
    k.onset = c->onset_us;
    k.best = 0xFFu;
    k.best_before = 0;
    k.best_src = 0;
    /* First the contacts taken for slaps, or still to be decided (a shake
     * shakes nothing); then, if none explains this one, those dropped as
     * shakes at the rails (against a source at the rails too: both sizes
     * estimates) that may have been slaps, had this begun within
     * DETECT_XT_DOUBT_US after them. */
    look_for_source(d, s, pad, &k, 0);
    if (louder && !k.louder) learn_shake_lobe(d, c); /* (step 13: a louder contact just before it) */
    if (k.best == 0xFFu && d->doubted) look_for_source(d, s, pad, &k, DETECT_C_XTALK);
    return k.best;
}

/* A shake that only its source could have made (it began on a pad at rest,
 * and no other contact but the source's own shakes began within the 3.4 ms
 * before it that vibration needs at most) is an observation of the pair's
 * vibration delay. Known once two agree (the smaller: a shake is more often
 * dated late than early); after that each sure observation moves it a unit
 * toward itself (since 2.21.0: it follows their median; until then it was
 * only ever shortened, and a delay learnt short from two early shakes
 * stayed short and lost the quiet players the pair rules keep). */
static COLD void learn_pair_delay(detect_t *d, const detect_pad_state_t *s, uint8_t pad, uint8_t src) {
    /* (16-bit times: every gap that matters is within 3.4 ms; one that
     * wrapped only loses an observation) */
    uint16_t onset = (uint16_t)s->c.onset_us, from = (uint16_t)xt_source_onset;
    int16_t gap = (int16_t)(onset - from);
    if (gap <= 0 || gap > XT_DELAY_MAX_US) return;
    uint8_t obs = (uint8_t)((uint16_t)(gap + DETECT_PAIR_UNIT_US / 2) / DETECT_PAIR_UNIT_US);
    if (obs == 0) obs = 1;
    uint8_t *slot = &d->pair_delay[pair_slot(src, pad)];
    uint8_t v = *slot & 0x7Fu;
    /* (nothing to learn: most shakes, once the table is known) */
    if ((*slot & DETECT_PAIR_KNOWN) && (DETECT_PAIR_MEDIAN ? obs == v : obs >= v)) return;
    const detect_pad_state_t *os = d->st;
    for (uint8_t j = 0; j < d->npads; j++, os++) {
        if (j == pad || j == src || (os->c.flags & (DETECT_C_LIVE | DETECT_C_XTALK)) != DETECT_C_LIVE) continue;
        uint16_t at = (uint16_t)os->c.onset_us;
        /* began from XT_DELAY_MAX_US + XT_LATE_US before this to just after it: it could have made it... */
        if ((uint16_t)(onset + DETECT_XT_EARLY_US - at) >= (uint16_t)(XT_DELAY_MAX_US + XT_LATE_US + DETECT_XT_EARLY_US)) continue;
        /* (... unless not decided yet and after the source: most likely its shake too) */
        if ((os->state == DETECT_SCAN || os->state == DETECT_PENDING) &&
            (int16_t)(at - from) > (int16_t)DETECT_XT_EARLY_US)
            continue;
        return; /* another contact could have made this one */
    }
    uint8_t least = obs < v ? obs : v;
    /* Once known, a unit toward each sure observation (step 25): the
     * delay follows its observations' median, where the least of them
     * only ever shortened it (a delay learnt short loses the quiet
     * players the pair rules keep). */
    if ((*slot & DETECT_PAIR_KNOWN) && DETECT_PAIR_MEDIAN) *slot = (uint8_t)(DETECT_PAIR_KNOWN | (obs > v ? v + 1u : v - 1u));
    else if (*slot & DETECT_PAIR_KNOWN) *slot = DETECT_PAIR_KNOWN | least;
    else if (v && (uint8_t)(obs > v ? obs - v : v - obs) <= DETECT_PAIR_AGREE) *slot = DETECT_PAIR_KNOWN | least;
    else *slot = obs; /* (the first, or one that disagreed: waits for another) */
}

/* A contact sure to be a hand's, as far as its disc's polarity goes: it
 * began on a pad at rest, reached the slap threshold, and its first
 * half-wave lasted longer than any shake's (peak: its estimated peak). */
static uint8_t hand_like(const detect_pad_state_t *s, const detect_pad_config_t *cfg, uint16_t peak) {
    return (s->c.flags & (DETECT_C_CLEAN | DETECT_C_LOBE)) == (DETECT_C_CLEAN | DETECT_C_LOBE) &&
           s->c.lobe_us > DISC_LOBE_MIN_US && peak >= cfg->slap;
}

/* The disc's polarity, learnt from the hands' contacts: known once DISC_SURE
 * more of them went one way than the other. */
static void vote_disc(detect_pad_state_t *s, int8_t pol) {
    int8_t v = (int8_t)(s->disc_votes + pol);
    if (v > DISC_VOTES_MAX) v = DISC_VOTES_MAX;
    if (v < -DISC_VOTES_MAX) v = -DISC_VOTES_MAX;
    s->disc_votes = v;
    s->disc = v >= DISC_SURE ? 1 : v <= -DISC_SURE ? -1 : 0;
}

/* Whether s's contact (estimated peak) is masked: it began within the mask
 * of the pad's reported contact and is no louder than twice it (than
 * DETECT_MASK_AFTER_SHARP_X times it if the reported contact was sharp:
 * step 33), or is sharp (the mask's loud-hit escape is for a hand's push:
 * a short, sharp first half-wave within the mask is the table's, however
 * loud: step 18).
 * A macro, not a function: the decision and its debug line share the
 * words, and the image stays as it was benched. */
#define masked_now(s, peak)                                                                                    \
    (since((s)->c.onset_us, (s)->mask_end_us) < 0 &&                                                           \
     (sharp(&(s)->c) || (peak) <= (((s)->reported & DETECT_REPORTED_SHARP) ? DETECT_MASK_AFTER_SHARP_X : 2u) * \
                                      (uint16_t)((s)->reported & (uint16_t)~DETECT_REPORTED_SHARP)))

/* Step 33: the reported contact's sharpness, kept with its peak for its
 * mask (masked_now). A function of its own, called last: in the
 * decision's own frame it took two bytes more of the stack's deepest
 * path. */
static COLD __attribute__((noinline)) void mark_sharp_report(const detect_t *d, detect_pad_state_t *s) {
    if (sharp(&s->c)) s->reported |= DETECT_REPORTED_SHARP;
}

COLD uint8_t detect_poll_pad_slow(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out) {
    if (pad >= d->npads) return 0;
    detect_pad_state_t *s = &d->st[pad];
    if (s->state != DETECT_PENDING || (int16_t)((uint16_t)now_us - s->until_lo) < 0) return 0;
    if (!take_work(d)) return 0; /* a later scan decides it: the onset stays what it is */
    s->state = DETECT_RING;
    if (!(s->c.flags & DETECT_C_LOBE) || s->ref < s->env) { /* a push longer than the scan */
        s->ref = s->env;
        s->ref_shift = REF_SHIFT_SHAKE;
    }
    set_levels(s);
    if (s->above < MIN_SAMPLES) {
#ifdef DETECT_DEBUG
        fprintf(stderr, "pad %u decide at %u onset %u GLITCH\n", pad + 1, now_us, s->c.onset_us);
#endif
        s->c.flags = 0; /* a glitch: it explains nothing */
        d->dropped_glitch++;
        return 0;
    }
#ifdef DETECT_DEBUG
    for (uint8_t j = 0; j < d->npads; j++) {
        const detect_contact_t *o = &d->st[j].c;
        int32_t gap = since(s->c.onset_us, o->onset_us);
        if (j == pad || !(o->flags & DETECT_C_LIVE) || gap < -3000 || gap > 6000) continue;
        fprintf(stderr, "XC pad %u onset %u peak %u lobe %u clip %u rails %u under %u flags %u gap %d | src %u onset %u peak %u lobe %u clip %u rails %u flags %u state %u\n",
                pad + 1, s->c.onset_us, s->c.peak, s->c.lobe_us, s->c.clipped_us, s->c.rails, s->under, s->c.flags, (int)gap,
                j + 1, o->onset_us, o->peak, (o->flags & DETECT_C_LOBE) ? o->lobe_us : 0xFFFFu, o->clipped_us, o->rails, o->flags,
                d->st[j].state);
    }
#endif
    const detect_pad_config_t *cfg = &d->pad[pad];
    if (s->c.flags & DETECT_C_WRONG) { /* against the disc's polarity: the table's */
        if (hand_like(s, cfg, estimated_peak(&s->c)) && crosstalk_source(d, s, pad) == 0xFFu) vote_disc(s, s->pol); /* (unless the disc is not what we think) */
        s->c.flags |= DETECT_C_XTALK;
        d->dropped_xtalk++;
        return 0;
    }
    uint8_t src = crosstalk_source(d, s, pad);
    uint16_t peak = estimated_peak(&s->c);
#ifdef DETECT_DEBUG
    fprintf(stderr, "pad %u decide at %u onset %u peak %u lobe %u clipped %u above %u clean %u under %u -> %s %u\n", pad + 1,
            now_us, s->c.onset_us, peak, s->c.lobe_us, s->c.clipped_us, s->above, (s->c.flags & DETECT_C_CLEAN) != 0,
            s->under,
            src != 0xFFu ? "DROP" : (peak < cfg->slap && !touch_like(&s->c)) || ringing_only(&s->c) ? "KNOCK"
            : masked_now(s, peak) ? "MASKED" : "report",
            src + 1u);
#endif
    if (src == 0xFFu && ((peak < cfg->slap && !touch_like(&s->c)) || ringing_only(&s->c))) {
        /* Light and not a finger's push (a knock on the table, vibration
         * from several slaps at once, drift under a ringing), or light on a
         * pad that was moving: a touch there cannot be told from the
         * shaking, nor from the rest tracker's drift. */
        s->c.flags |= DETECT_C_XTALK;
        d->dropped_xtalk++;
        return 0;
    }
    if (src != 0xFFu) {
        /* (what is learnt needs a sure source: a slap reported, or still to be decided) */
        uint8_t sure = !(d->st[src].c.flags & DETECT_C_XTALK);
        if (sure && (s->c.flags & DETECT_C_CLEAN)) learn_pair_delay(d, s, pad, src); /* (its onset is sure) */
        s->c.flags |= DETECT_C_XTALK;
        if (DETECT_CLIPPED(&s->c)) d->doubted |= (uint8_t)(1u << pad); /* (it may have been a slap: crosstalk_source) */
        else if (sure) note_sure_shake(d, s, pad, src); /* (off the rails: its size is measured) */
        s->xt_pad = src;
        s->xt_onset_lo = (uint16_t)xt_source_onset;
        s->xt_peak = peak;
        d->dropped_xtalk++;
        return 0;
    }
    if (masked_now(s, peak)) {
        return 0; /* (the same player again, within the mask) */
    }
    if (hand_like(s, cfg, peak)) vote_disc(s, s->pol);
    s->mask_end_us = s->c.onset_us + cfg->mask_us;
    s->reported = peak > 1023u ? 1023u : peak;
    s->ref_shift = REF_SHIFT_OWN; /* (lvl_a stays: set_levels() above, from ref, thr and nf, none changed since) */
    out->pad = pad;
    out->is_slap = peak >= cfg->slap;
    out->peak = s->reported;
    out->onset_us = reported_onset_us(s);
    mark_sharp_report(d, s);
    return 1;
}

uint8_t detect_poll(detect_t *d, uint32_t now_us, detect_hit_t *out, uint8_t max) {
    uint8_t n = 0;
    for (uint8_t p = 0; p < d->npads; p++) {
        detect_hit_t h;
        if (detect_poll_pad(d, p, now_us, &h)) {
            if (n < max) out[n++] = h;
        }
    }
    /* Oldest onset first (insertion sort: at most eight). */
    for (uint8_t i = 1; i < n; i++) {
        detect_hit_t h = out[i];
        uint8_t j = i;
        while (j > 0 && since(out[j - 1].onset_us, h.onset_us) > 0) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = h;
    }
    return n;
}
