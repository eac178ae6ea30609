/*
 * detect.c - piezo slap detection; see detect.h for the algorithm.
 *
 * Written for an 8-bit AVR at 16 MHz: the per-sample path must fit in the
 * ~13 us one ADC conversion takes, so a quiet pad's sample is a few 16-bit
 * operations; everything done once per contact (starting it, back-dating
 * its onset, deciding it) is out of line. No library division: the onset
 * back-dating is a short long division by hand.
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

/* The noise floor comes down one count per this many quiet samples (~2 ms):
 * it follows hum up at once and lets it go slowly. */
#define NF_DOWN_SAMPLES 16u
/* Decide this long after the onset plus the longest scan, so that a
 * neighbour whose onset was back-dated a few samples has finished too. */
#define DECIDE_MARGIN_US 1000u
/* A clipped contact's peak doubles every this many of its samples at the
 * rails (in the whole scan: a hard slap's ringing clips too). */
#define CLIP_DOUBLING 3u /* (estimated_peak() counts on 3) */

static int32_t since(uint32_t t, uint32_t ref) { return (int32_t)(t - ref); }
static uint8_t louder_source(const detect_t *d, uint8_t pad, uint8_t skip);

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

/* Contacts are forgotten; the rest points and noise floors stay learnt. */
void detect_reset_state(detect_t *d) {
    for (uint8_t i = 0; i < DETECT_MAX_PADS; i++) {
        detect_pad_state_t *s = &d->st[i];
        uint16_t base = s->base, thr_now = s->thr_now;
        uint8_t nf = s->nf, have = s->have_prev;
        memset(s, 0, sizeof *s);
        s->base = base;
        s->nf = nf;
        s->thr_now = thr_now;
        s->have_prev = have;
    }
}

void detect_init(detect_t *d, uint8_t npads) {
    if (npads < 1) npads = 1;
    if (npads > DETECT_MAX_PADS) npads = DETECT_MAX_PADS;
    d->npads = npads;
    for (uint8_t i = 0; i < DETECT_MAX_PADS; i++) detect_default_config(&d->pad[i]);
    d->dropped_xtalk = 0;
    d->dropped_glitch = 0;
    d->decide_budget = 0xFFu;
    memset(d->st, 0, sizeof d->st);
    detect_settings_changed(d);
}

/* The threshold a contact must clear at rest: the pad's own, or 1.5 x its
 * noise floor (hum) plus a little, whichever is higher. */
static inline uint16_t rest_threshold(const detect_t *d, const detect_pad_state_t *s, uint8_t pad) {
    uint16_t floor = (uint16_t)(s->nf + (s->nf >> 1) + 4u);
    uint16_t thr = d->thr[pad];
    return floor > thr ? floor : thr;
}

static uint32_t decide_time(const detect_t *d, const detect_pad_state_t *s) {
    return s->onset_us + DETECT_XT_TOL_US + d->max_scan_us + DECIDE_MARGIN_US;
}

void detect_settings_changed(detect_t *d) {
    d->max_scan_us = 0;
    for (uint8_t i = 0; i < DETECT_MAX_PADS; i++) {
        d->thr[i] = detect_start_threshold(&d->pad[i]);
        if (i < d->npads && d->pad[i].scan_us > d->max_scan_us) d->max_scan_us = d->pad[i].scan_us;
    }
    /* A contact already waiting is decided by the new settings, one being
     * scanned scans for the new scan time. */
    for (uint8_t i = 0; i < d->npads; i++) {
        detect_pad_state_t *s = &d->st[i];
        s->thr_now = rest_threshold(d, s, i);
        if (s->state == DETECT_PENDING) s->decide_us = decide_time(d, s);
        if (s->state == DETECT_SCAN) s->scan_end_us = s->orise.t0 + d->pad[i].scan_us;
    }
}

uint16_t detect_level(const detect_t *d, uint8_t pad, uint16_t raw) {
    if (pad >= d->npads) return 0;
    int16_t dv = (int16_t)raw - (int16_t)d->st[pad].base;
    return (uint16_t)(dv < 0 ? -dv : dv);
}

uint16_t detect_trigger_level(const detect_t *d, uint8_t pad) {
    const detect_pad_state_t *s = &d->st[pad];
    if (s->state == DETECT_SCAN || s->state == DETECT_PENDING) return 0xFFFFu;
    if (s->state == DETECT_MASK || s->state == DETECT_RING) return s->level;
    return s->thr_now;
}

/* The sum of a pad's last four samples (its history's newest four): a
 * table's ringing (1.5..3 kHz, a period of 3..5 samples) mostly cancels in
 * it, a hand's push (0.3..1 ms one way) does not. */
typedef char detect_hist_holds_five[DETECT_HIST == 5u ? 1 : -1]; /* sum4 and the RING fast path count on it */
static inline int16_t sum4(const detect_pad_state_t *s) {
    int16_t sum = 0;
    uint8_t i = s->hist_at;
    for (uint8_t k = 0; k < 4u; k++) {
        i = (uint8_t)(i ? i - 1u : DETECT_HIST - 1u);
        sum = (int16_t)(sum + s->hist_d[i]);
    }
    return sum;
}

static inline uint8_t at_rail(uint16_t raw) { return raw <= DETECT_CLIP_LO || raw >= DETECT_CLIP_HI; }

/* The start of the rise that brought pad s to this sample (the newest in
 * its history), going pol's way (detect.h, RISE). */
static void find_rise(detect_pad_state_t *s, int8_t pol, int16_t step, uint32_t t_us, uint32_t not_before) {
    uint8_t newest = (uint8_t)(s->hist_at ? s->hist_at - 1u : DETECT_HIST - 1u);
    uint8_t k = newest, back = 0;
#define PREV(i) ((uint8_t)((i) ? (i) - 1u : DETECT_HIST - 1u))
#define STEP(i) ((int16_t)(pol > 0 ? s->hist_d[i] - s->hist_d[PREV(i)] : s->hist_d[PREV(i)] - s->hist_d[i]))
    while (back + 1u < DETECT_HIST) {
        int16_t inc = STEP(k);
        uint8_t j = PREV(k);
        if (inc < step) {
            /* No rise into k: the rise starts at k, unless this was one
             * step lost in noise with a clear step before it. */
            if (inc <= -(step >> 1) || back + 2u >= DETECT_HIST || STEP(j) < step) break;
        }
        if ((int16_t)(s->hist_t[j] - (uint16_t)not_before) < 0) break; /* not before what came first */
        back++;
        if (back + 1u < DETECT_HIST && 2 * STEP(j) + step <= inc) {
            k = j; /* the first steep step: the contact landed after j */
            break;
        }
        k = j;
    }
    if (k == newest) k = PREV(newest); /* a rise of one small step: from the sample before */
    detect_rise_t *o = &s->orise;
    uint16_t t_low = (uint16_t)t_us;
    uint8_t k1 = (uint8_t)(k + 1u < DETECT_HIST ? k + 1u : 0u);
    o->t0 = t_us - (uint16_t)(t_low - s->hist_t[k]);
    o->y0 = s->hist_d[k];
    o->y1 = s->hist_d[k1];
    o->dt1 = (uint16_t)(s->hist_t[k1] - s->hist_t[k]);
    o->n = 1;
    if (k1 != newest) {
        uint8_t k2 = (uint8_t)(k1 + 1u < DETECT_HIST ? k1 + 1u : 0u);
        o->y2 = s->hist_d[k2];
        o->dt2 = (uint16_t)(s->hist_t[k2] - s->hist_t[k1]);
        o->n = 2;
    }
    o->dir = pol;
#undef STEP
#undef PREV
}

/* A contact starts at this sample (|dv| reached what the state asks); its
 * onset is the start of the rise that brought it here. */
static COLD void start_contact(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, int16_t dv,
                               uint16_t a, uint32_t t_us, uint32_t not_before) {
    int8_t pol = dv < 0 ? -1 : 1;
    /* On a pad still ringing from a shake that was dropped, the shake's
     * source has had its say: only a later one can explain this contact. */
    s->shaken = s->state == DETECT_RING; /* shake_src was set when the shake was dropped */
    find_rise(s, pol, (int16_t)(DETECT_RISE_STEP + (s->nf >> 3)), t_us, not_before);
#ifdef DETECT_DEBUG
    fprintf(stderr, "pad %u start at %u a=%u onset-t0 %u n=%u y %d %d %d\n", pad + 1, t_us, a, s->orise.t0, s->orise.n, s->orise.y0, s->orise.y1, s->orise.y2);
#endif
    s->pol = pol;
    s->onset_us = s->orise.t0; /* until the scan ends and back-dates it */
    s->peak = a;
    s->lobe = a;
    s->lobe_t = (uint16_t)t_us;
    s->trig_t = (uint16_t)t_us;
    s->lobe_done = 0;
    s->above = 1;
    s->clipped = at_rail(raw);
    s->scan_end_us = t_us + d->pad[pad].scan_us;
    s->state = DETECT_SCAN;
}

/* Whether the contact's first half-wave was over as quickly as table
 * vibration's is (give or take the sample it was seen at). */
static uint8_t sharp(const detect_pad_state_t *s) {
    return s->lobe_done && (int16_t)(s->lobe_end_t - s->trig_t) <= (int16_t)DETECT_XT_LOBE_US;
}

/* floor(num * 64 / den) for 0 <= num < den * 4, den > 0, by long division
 * (16-bit shifts and subtractions: the library's 32-bit division takes ~40 us). */
static uint16_t ratio64(uint16_t num, uint16_t den) {
    uint16_t rem = num, q = 0;
    while (rem >= den) {
        rem -= den;
        q++;
    }
    for (uint8_t b = 0; b < 6; b++) {
        rem <<= 1; /* rem < den <= 2047: no overflow */
        q <<= 1;
        if (rem >= den) {
            rem -= den;
            q |= 1u;
        }
    }
    return q;
}

/* The moment of contact from the contact's rise: back along the line through
 * its first two samples to the level before it, no earlier than the sample
 * before it. With one sample of the rise only (or a flat second step, as
 * when it clips), halfway between the sample before and the first of it. */
#define ORISE_DATED 3u /* orise.n once the onset is worked out */

/* When a line through (t_a, y_a) and y_b dt later reached y_base, at most
 * max_back before t_a; 0xFFFFFFFF when the line does not rise (dir's way). */
static uint32_t extrapolate(uint32_t t_a, int16_t y_base, int16_t y_a, int16_t y_b, uint16_t dt, uint16_t max_back,
                            int8_t dir) {
    int16_t num = (int16_t)((y_a - y_base) * dir);
    int16_t den = (int16_t)((y_b - y_a) * dir);
    if (den <= 0) return 0xFFFFFFFFu;
    if (num <= 0) return t_a;
    if ((uint32_t)num * dt >= (uint32_t)den * max_back || (uint16_t)num >= (uint16_t)den * 4u) return t_a - max_back;
    uint32_t back = ((uint32_t)dt * ratio64((uint16_t)num, (uint16_t)den)) >> 6;
    return t_a - (back > max_back ? max_back : back);
}

static uint32_t back_date(const detect_rise_t *o) {
    uint32_t t1 = o->t0 + o->dt1;
    if (o->n < 2) return o->t0 + (o->dt1 >> 1);
    int16_t num = (int16_t)((o->y1 - o->y0) * o->dir);
    int16_t den = (int16_t)((o->y2 - o->y1) * o->dir);
    if (den <= 0 || num <= 0) return o->t0 + (o->dt1 >> 1);
    /* back = num / den * dt2, at most dt1 (the sample before the rise) */
    if ((uint32_t)num * o->dt2 >= (uint32_t)den * o->dt1) return o->t0;
    uint16_t q; /* num/den in 1/64ths; num/den < dt1/dt2 < 4 for any sane scan */
    if ((uint16_t)num >= (uint16_t)den * 4u) return o->t0;
    q = ratio64((uint16_t)num, (uint16_t)den);
    uint32_t back = ((uint32_t)o->dt2 * q) >> 6;
    if (back > o->dt1) back = o->dt1;
    return t1 - back;
}

/* The peak with clipping undone (after Edrumulus' overload correction, which
 * maps the number of overloaded samples to a gain). */
static uint16_t estimated_peak(const detect_pad_state_t *s) {
    if (!s->clipped) return s->peak;
    /* A ringing that decays exponentially stays clipped for a time that
     * grows with the log of its size: the peak doubles every CLIP_DOUBLING
     * samples at the rails (fitted on the table model: a hard slap's ringing
     * and a neighbour's shake clip for very different times). */
    uint8_t q = (uint8_t)(s->clipped / CLIP_DOUBLING), r = (uint8_t)(s->clipped % CLIP_DOUBLING);
    if (q > 6u) return 0xFFFEu;
    uint32_t est = (uint32_t)s->peak << q;
    est += (est * (r == 0u ? 0u : r == 1u ? 85u : 171u)) >> 8; /* x (1 + r/3), no division */
    return est > 0xFFFEu ? 0xFFFEu : (uint16_t)est;
}

static COLD void end_scan(detect_t *d, detect_pad_state_t *s) {
    if (!s->lobe_done) { /* a first half-wave as long as the scan: a push */
        s->lobe_done = 1;
        s->lobe_end_t = (uint16_t)s->scan_end_us;
    }
    if (s->orise.n != ORISE_DATED) s->onset_us = back_date(&s->orise); /* (a pad no longer sampled) */
    s->peak = estimated_peak(s);
    s->decide_us = decide_time(d, s);
    s->state = DETECT_PENDING;
}

/* A rise half as big again as a sharp first half-wave, in the scan or while
 * the contact waits for its decision: that first part was a neighbour's
 * shake, this is the player's own slap; the contact starts again here and
 * the shake's source cannot explain it. (A hand's first half-wave stays: a
 * neighbour's shake on top of it changes nothing; nor can a hand slap the
 * same pad twice within milliseconds.) 1 if it did. */
static uint8_t own_rise(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, int16_t dv, uint16_t a,
                        uint32_t t_us) {
    if (!s->lobe_done || a <= s->lobe + (s->lobe >> 1) || !sharp(s)) return 0;
    uint8_t src = louder_source(d, pad, 0xFFu);
    start_contact(d, s, pad, raw, dv, a, t_us, t_us - (uint16_t)((uint16_t)t_us - s->lobe_t)); /* not before the shake's peak */
    s->shaken = 1;
    s->shake_src = src;
    return 1;
}

/* A SCAN sample: the peak, the first half-wave, a rise that dwarfs the first
 * half-wave (the player's own slap on a pad a neighbour had shaken: the onset
 * moves to it), the scan's end. */
static COLD void scan_sample(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, int16_t dv,
                             uint16_t a, uint32_t t_us) {
    detect_rise_t *o = &s->orise;
    if (o->n != ORISE_DATED) {
        /* The first sample after the contact started: its onset, from the
         * rise's first two samples, or from the line through the sample that
         * reached the threshold and this one, whichever is later (a hand
         * landing on a pad that was already moving: the steep new slope). */
        uint8_t at = s->hist_at, prev = (uint8_t)(at >= 2u ? at - 2u : at + DETECT_HIST - 2u);
        uint16_t dt = (uint16_t)((uint16_t)t_us - s->hist_t[prev]);
        if (o->n == 1) { /* the rise's second sample is this one */
            o->y2 = dv;
            o->dt2 = dt;
            o->n = 2;
        }
        uint32_t onset = back_date(o);
        uint32_t t_trig = t_us - dt;
        uint32_t steep = extrapolate(t_trig, o->y0, s->hist_d[prev], dv, dt, (uint16_t)(t_trig - o->t0), o->dir);
        if (steep != 0xFFFFFFFFu && since(steep, onset) > 0) onset = steep;
        s->onset_us = onset;
        o->n = ORISE_DATED;
    }
    if (a > s->peak) s->peak = a;
    if (a >= d->thr[pad] && s->above < 255) s->above++;
    if (at_rail(raw) && s->clipped < 255) s->clipped++;
    int16_t pd = (int16_t)(s->pol > 0 ? dv : -dv);
    if (!s->lobe_done) {
        if (pd > (int16_t)s->lobe) {
            s->lobe = (uint16_t)pd;
            s->lobe_t = (uint16_t)t_us;
        } else if (pd < (int16_t)(s->lobe >> 1)) {
            s->lobe_done = 1;
            s->lobe_end_t = (uint16_t)t_us;
        }
    } else if (own_rise(d, s, pad, raw, dv, a, t_us)) {
        return;
    }
    if (since(t_us, s->scan_end_us) >= 0) end_scan(d, s);
}

/* Once per envelope block (2 ms): the envelope follows the ringing down (the
 * block's largest sample, or the last envelope halved), and the level
 * a new contact needs is worked out. A pad quiet again goes back to rest. */
static COLD void ring_block(const detect_t *d, detect_pad_state_t *s, uint8_t pad, uint32_t t_us) {
    uint16_t decayed = (uint16_t)(s->env >> 1); /* the last block's, halved */
    s->env = s->blk_max > decayed ? s->blk_max : decayed;
    s->blk_max = 0;
    s->blk_end_us = t_us + DETECT_ENV_BLOCK_US;
    if (s->state == DETECT_MASK) {
        if (since(t_us, s->scan_end_us) < 0) { /* scan_end_us: the mask's end */
            uint32_t escape = (uint32_t)s->peak * 2u;
            s->level = escape > 0xFFFFu ? 0xFFFFu : (uint16_t)escape;
            if (since(s->blk_end_us, s->scan_end_us) > 0) s->blk_end_us = s->scan_end_us;
            return;
        }
        s->state = DETECT_RING;
    }
    uint16_t decayed_lp = (uint16_t)(s->env_lp >> 1);
    s->env_lp = s->blk_lp > decayed_lp ? s->blk_lp : decayed_lp;
    s->blk_lp = 0;
    {
        uint32_t lp = (uint32_t)s->env_lp + (s->env_lp >> 1), rest4 = (uint32_t)s->thr_now * 4u;
        if (lp < rest4) lp = rest4;
        s->level_lp4 = lp > 0xFFFFu ? 0xFFFFu : (uint16_t)lp;
    }
    uint16_t level = (uint16_t)(s->env + (s->env >> 1));
    uint16_t rest = s->thr_now;
#ifdef DETECT_DEBUG
    fprintf(stderr, "pad %u block at %u env %u level %u rest %u\n", pad + 1, t_us, s->env, (uint16_t)(s->env + (s->env >> 1)), rest);
#endif
    (void)d;
    (void)pad;
    if (level <= rest) {
        s->state = DETECT_IDLE;
        s->level = rest;
    } else {
        s->level = level;
    }
}

/* The noise floor: up a quarter of the way to a louder quiet sample at once,
 * down a count per 16 quiet samples (~2 ms); and the threshold it sets. */
void detect_floor_step(detect_pad_state_t *s, uint16_t raw, uint16_t thr) {
    int16_t dv = (int16_t)((int16_t)raw - (int16_t)s->base);
    uint16_t a = (uint16_t)(dv < 0 ? -dv : dv);
    if (a > s->nf) {
        uint16_t nf = (uint16_t)(s->nf + ((a - s->nf + 3u) >> 2));
        s->nf = nf > 255u ? 255u : (uint8_t)nf;
    } else if (s->nf) {
        s->nf--;
    }
    s->nf_count = 0;
    uint16_t floor = (uint16_t)(s->nf + (s->nf >> 1) + 4u);
    s->thr_now = floor > thr ? floor : thr;
}

COLD void detect_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us) {
    int16_t dv = (int16_t)((int16_t)raw - (int16_t)s->base);
    if (!s->have_prev) { /* the first sample ever: the rest point starts here */
        s->base = raw;
        s->base_frac = 0;
        s->have_prev = 1;
        s->thr_now = rest_threshold(d, s, pad);
        for (uint8_t i = 0; i < DETECT_HIST; i++) s->hist_d[i] = 0;
        return;
    }
    uint16_t a = (uint16_t)(dv < 0 ? -dv : dv);
    switch (s->state) {
    case DETECT_IDLE:
        start_contact(d, s, pad, raw, dv, a, t_us, t_us - 0x8000u); /* the fast path handles the rest */
        break;
    case DETECT_SCAN:
        scan_sample(d, s, pad, raw, dv, a, t_us);
        break;
    case DETECT_PENDING:
        own_rise(d, s, pad, raw, dv, a, t_us);
        break;
    default: /* MASK, RING: a new block, or a new contact */
        if (since(t_us, s->blk_end_us) >= 0) ring_block(d, s, pad, t_us);
        if (a >= s->level) {
            start_contact(d, s, pad, raw, dv, a, t_us, t_us - 0x8000u);
        } else if (s->state == DETECT_RING) {
            /* A push the ringing cannot explain: the 4-sample sum. */
            int16_t sum = sum4(s);
            s->sum = sum;
            uint16_t as = (uint16_t)(sum < 0 ? -sum : sum);
            if (as >= s->level_lp4) {
                start_contact(d, s, pad, raw, sum, a, t_us, t_us - 0x8000u);
            } else {
                if (as > s->blk_lp) s->blk_lp = as;
                if (a > s->blk_max) s->blk_max = a;
            }
        } else if (s->state != DETECT_IDLE && a > s->blk_max) {
            s->blk_max = a;
        }
        break;
    }
}

/* The fast path (detect.h): every sample of every pad comes here first. */
OWN_FRAME uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo) {
    int16_t dv = (int16_t)((int16_t)raw - (int16_t)s->base);
    uint8_t at = s->hist_at;
    s->hist_d[at] = dv;
    s->hist_t[at] = t_lo;
    if (++at >= DETECT_HIST) at = 0;
    s->hist_at = at;
    uint16_t a = (uint16_t)(dv < 0 ? -dv : dv);
    uint8_t state = s->state;
    if (state == DETECT_IDLE) {
        if (a >= s->thr_now) return DETECT_NEEDS_STEP; /* a contact (or the very first sample: thr_now 0) */
        /* The rest point follows the quiet signal: dv summed, a count per
         * 256 (a ~256-sample average without a multiply). */
        int16_t f = (int16_t)(s->base_frac + dv);
        if (f >= 256) {
            f = (int16_t)(f - 256);
            s->base++;
        } else if (f <= -256) {
            f = (int16_t)(f + 256);
            s->base--;
        }
        s->base_frac = f;
        if (a > s->nf || ++s->nf_count >= NF_DOWN_SAMPLES) return DETECT_NEEDS_FLOOR;
        return DETECT_DONE;
    }
    if (state == DETECT_SCAN) {
        /* What the slow path finishes: the rise's second sample, the scan's
         * end, a rise that dwarfs a finished first half-wave. */
        if (s->orise.n != ORISE_DATED || (int16_t)(t_lo - (uint16_t)s->scan_end_us) >= 0) return DETECT_NEEDS_STEP;
        if (s->lobe_done && a > s->lobe + (s->lobe >> 1)) return DETECT_NEEDS_STEP;
        if (a > s->peak) s->peak = a;
        if (a >= s->thr_now && s->above < 255) s->above++;
        if ((raw <= DETECT_CLIP_LO || raw >= DETECT_CLIP_HI) && s->clipped < 255) s->clipped++;
        if (!s->lobe_done) {
            int16_t pd = s->pol > 0 ? dv : (int16_t)-dv;
            if (pd > (int16_t)s->lobe) {
                s->lobe = (uint16_t)pd;
                s->lobe_t = t_lo;
            } else if (pd < (int16_t)(s->lobe >> 1)) {
                s->lobe_done = 1;
                s->lobe_end_t = t_lo;
            }
        }
        return DETECT_DONE;
    }
    if (state == DETECT_PENDING) return a > s->lobe + (s->lobe >> 1) ? DETECT_NEEDS_STEP : DETECT_DONE;
    /* MASK, RING */
    if (a >= s->level || (int16_t)(t_lo - (uint16_t)s->blk_end_us) >= 0) return DETECT_NEEDS_STEP;
    if (state == DETECT_RING) {
        /* The 4-sample sum, kept up to date: in the newest sample, out the
         * one four before it (the oldest but one of the five kept). */
        int16_t sum = (int16_t)(s->sum + dv - s->hist_d[at]); /* at: now the oldest, four before the newest */
        s->sum = sum;
        uint16_t as = (uint16_t)(sum < 0 ? -sum : sum);
        if (as >= s->level_lp4) return DETECT_NEEDS_STEP;
        if (as > s->blk_lp) s->blk_lp = as;
    }
    if (a > s->blk_max) s->blk_max = a;
    return DETECT_DONE;
}

/* The loudest other pad's contact that began before this pad's (within
 * DETECT_XT_TOL_US of it, at most xwin_us earlier): the slap that could
 * have shaken it. Leaves out pad `skip`. 0xFF: none. */
static uint8_t louder_source(const detect_t *d, uint8_t pad, uint8_t skip) {
    const detect_pad_state_t *s = &d->st[pad];
    int32_t xwin = (int32_t)d->pad[pad].xwin_us;
    uint8_t best = 0xFFu;
    uint16_t best_peak = 0;
    for (uint8_t j = 0; j < d->npads; j++) {
        if (j == pad || j == skip) continue;
        const detect_pad_state_t *o = &d->st[j];
        if (o->peak <= best_peak) continue;
        if (o->above < DETECT_MIN_SAMPLES) continue; /* no contact, or a glitch */
        int32_t gap = since(s->onset_us, o->onset_us); /* > 0: the other came first */
        if (gap < -(int32_t)DETECT_XT_TOL_US || gap > xwin) continue;
        best = j;
        best_peak = o->peak;
    }
    return best;
}

/* The pad whose slap explains this contact as crosstalk (detect.h, 5), or
 * 0xFF: a sharp contact below xtalk % of the loudest slap that began before
 * it; on a pad already shaken, the shake's own source does not count again. */
/* The pad whose slap explains this contact as crosstalk (detect.h, 5), or
 * 0xFF: a sharp contact below xtalk % of the loudest slap that began before
 * it; on a pad already shaken, the shake's own source does not count again. */
static uint8_t crosstalk_source(const detect_t *d, uint8_t pad) {
    const detect_pad_state_t *s = &d->st[pad];
    uint8_t xtalk = d->pad[pad].xtalk;
    if (xtalk == 0 || !sharp(s)) return 0xFFu; /* off, or a hand's push */
    uint8_t j = louder_source(d, pad, s->shaken ? s->shake_src : 0xFFu);
    if (j == 0xFFu) return 0xFFu;
    if ((uint32_t)s->peak * 100u >= (uint32_t)d->st[j].peak * xtalk) return 0xFFu;
    return j;
}

COLD uint8_t detect_poll_pad_slow(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out) {
    if (pad >= d->npads) return 0;
    detect_pad_state_t *s = &d->st[pad];
    if (s->state == DETECT_SCAN && since(now_us, s->scan_end_us) >= 0) end_scan(d, s); /* a pad no longer sampled */
    if (s->state != DETECT_PENDING) return 0;
    if (since(now_us, s->decide_us) < 0) return 0; /* a neighbour may still be scanning */
    if (d->decide_budget == 0) return 0; /* a later scan decides it: the onset stays what it is */
    if (d->decide_budget != 0xFFu) d->decide_budget--;

    if (s->above < DETECT_MIN_SAMPLES) {
        /* A glitch: no contact, no ringing to wait out; it explains nothing. */
        s->state = DETECT_IDLE;
        s->peak = 0;
        d->dropped_glitch++;
        return 0;
    }
    /* Deciding one pad leaves the onset and peak every other pad's decision
     * needs in place, so the order pads are decided in never matters. */
    uint8_t src = crosstalk_source(d, pad);
    uint8_t drop = src != 0xFFu;
#ifdef DETECT_DEBUG
    fprintf(stderr, "pad %u decide at %u onset %u peak %u lobe %u lobe_dt %d clipped %u above %u shaken %u -> %s\n", pad + 1, now_us,
            s->onset_us, s->peak, s->lobe, (int16_t)(s->lobe_end_t - (uint16_t)s->onset_us), s->clipped, s->above, s->shaken,
            drop ? "DROP" : "report");
#endif
    const detect_pad_config_t *cfg = &d->pad[pad];
    s->env = s->peak > 1023u ? 1023u : s->peak;
    s->env_lp = s->env; /* a 4-sample sum of ringing stays within its peak */
    s->blk_lp = s->env_lp; /* (for the first block too) */
    s->blk_max = 0;
    s->level = 0xFFFFu;
    s->blk_end_us = now_us; /* the next sample works out the level */
    if (drop) {
        s->state = DETECT_RING;
        s->sum = sum4(s);
        s->shake_src = src;
        d->dropped_xtalk++;
        return 0;
    }
    s->state = DETECT_MASK;
    s->scan_end_us = s->onset_us + cfg->mask_us; /* the mask's end */
    out->pad = pad;
    out->is_slap = s->peak >= cfg->slap;
    out->peak = s->peak > 1023u ? 1023u : s->peak;
    out->onset_us = s->onset_us;
    return 1;
}

uint8_t detect_poll(detect_t *d, uint32_t now_us, detect_hit_t *out, uint8_t max) {
    uint8_t n = 0;
    for (uint8_t i = 0; i < d->npads; i++) {
        detect_hit_t h;
        if (d->st[i].state != DETECT_SCAN && d->st[i].state != DETECT_PENDING) continue;
        if (!detect_poll_pad_slow(d, i, now_us, &h)) continue;
        if (n >= max) continue; /* caller's buffer full: the contact is lost, never garbled */
        /* Insertion sort by onset: at most 8 entries. */
        uint8_t pos = n;
        while (pos > 0 && since(out[pos - 1].onset_us, h.onset_us) > 0) {
            out[pos] = out[pos - 1];
            pos--;
        }
        out[pos] = h;
        n++;
    }
    return n;
}
