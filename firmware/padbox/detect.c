/*
 * detect.c - piezo slap detection; see detect.h for the algorithm.
 *
 * Written for an 8-bit AVR at 16 MHz: the per-sample path (detect_sample)
 * must fit in the ~13 us one ADC conversion takes, so its common cases are
 * 16-bit compares and one 32-bit time compare per sample (detect.h inline,
 * detect_sample_fast); everything rare is out of line. No division: the
 * onset interpolation (once per contact, when its scan ends) is a short
 * long division by hand.
 */
#include "detect.h"

#include <string.h>

/* The envelope decays in four steps per half-life, each multiplying by
 * 27/32 (0.84375^4 = 0.507, near enough one half) with shifts only. */
#define DECAY_STEPS_PER_HALFLIFE 4u
/* An extrapolated onset reaches back at most this many sample periods. */
#define MAX_BACK_SAMPLES 4u

/* Rare steps are kept out of the per-sample path (no inlining, even with
 * LTO): inlined, they crowd the registers and slow every common sample. */
#if defined(__GNUC__)
#define COLD __attribute__((noinline))
#else
#define COLD
#endif
/* detect_sample_fast stays a function of its own for the same reason: with
 * no calls inside it needs no saved registers, where inlined into the
 * firmware's scan loop the compiler spills and recomputes its values. */
#define OWN_FRAME COLD

static int32_t since(uint32_t t, uint32_t ref) { return (int32_t)(t - ref); }

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

void detect_reset_state(detect_t *d) {
    memset(d->st, 0, sizeof d->st);
}

void detect_init(detect_t *d, uint8_t npads) {
    if (npads < 1) npads = 1;
    if (npads > DETECT_MAX_PADS) npads = DETECT_MAX_PADS;
    d->npads = npads;
    for (uint8_t i = 0; i < DETECT_MAX_PADS; i++) detect_default_config(&d->pad[i]);
    d->dropped_xtalk = 0;
    d->dropped_glitch = 0;
    detect_settings_changed(d);
    detect_reset_state(d);
}

/* When a contact whose scan is over can be decided: every contact with an
 * onset inside this pad's window has finished its scan by onset + window +
 * the longest scan. Worked out once, when the scan ends (not at every poll). */
static uint32_t decide_time(const detect_t *d, uint8_t pad) {
    const detect_pad_config_t *cfg = &d->pad[pad];
    return d->st[pad].onset_us + (cfg->xtalk ? cfg->xwin_us : 0) + d->max_scan_us;
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
        if (s->state == DETECT_PENDING) s->decide_us = decide_time(d, i);
        if (s->state == DETECT_SCAN) s->scan_end_us = s->onset_us + d->pad[i].scan_us;
    }
}

/* Remember where the signal crossed the threshold: between the previous
 * sample and this one, or (when the previous sample was already above it,
 * a contact on a ringing pad) back along the rising edge, at most max_back
 * sample periods. */
static void crossing_at(detect_crossing_t *c, const detect_pad_state_t *s, uint16_t value,
                        uint32_t t_us, uint16_t thr, uint8_t max_back) {
    c->t_us = t_us;
    c->max_back = max_back;
    c->over = (uint16_t)(value - thr);
    c->span = 0;
    c->dt_us = 0;
    if (s->have_prev && s->prev_value < value) {
        uint32_t dt = t_us - s->prev_us;
        if (dt > 0 && dt <= 0xFFFFu) {
            c->dt_us = (uint16_t)dt;
            c->span = (uint16_t)(value - s->prev_value);
        }
    }
}

/* The crossing time, on the straight line through the two samples. */
static uint32_t crossing_time(const detect_crossing_t *c) {
    if (c->dt_us == 0 || c->span == 0) return c->t_us;
    uint32_t limit = (uint32_t)c->dt_us * c->max_back;
    if ((uint32_t)c->over >= (uint32_t)c->span * c->max_back) return c->t_us - limit;
    /* over/span in 1/64ths (the rounding is below dt/64, a couple of
     * microseconds), by long division: the whole part is below max_back,
     * then six bits of fraction, 16-bit shifts and subtractions only (the
     * library's 16-bit division takes twice as long, a 32-bit one ~40 us).
     * Exactly floor(over * 64 / span). */
    uint16_t rem = c->over;
    uint16_t ratio = 0;
    while (rem >= c->span) { /* at most max_back - 1 times: over < span * max_back */
        rem -= c->span;
        ratio++;
    }
    for (uint8_t b = 0; b < 6; b++) {
        rem <<= 1; /* rem < span <= 1023: no overflow */
        ratio <<= 1;
        if (rem >= c->span) {
            rem -= c->span;
            ratio |= 1u;
        }
    }
    uint32_t back = ((uint32_t)c->dt_us * ratio) >> 6;
    if (back > limit) back = limit;
    return c->t_us - back;
}

static void decay_env(detect_pad_state_t *s, uint32_t t_us) {
    const uint16_t step = DETECT_DECAY_HALFLIFE_US / DECAY_STEPS_PER_HALFLIFE;
    /* Normally at most one step per sample; bounded so a long gap cannot spin. */
    for (uint8_t n = 0; n < 64 && since(t_us, s->step_at_us) >= 0; n++) {
        s->env = s->env - (s->env >> 3) - (s->env >> 5);
        s->step_at_us += step;
    }
}

uint16_t detect_trigger_level(const detect_t *d, uint8_t pad, uint32_t t_us) {
    const detect_pad_state_t *s = &d->st[pad];
    (void)t_us;
    if (s->state == DETECT_SCAN || s->state == DETECT_PENDING) return 0xFFFFu;
    if (s->state == DETECT_REARM) return s->level; /* as of the latest envelope block */
    return d->thr[pad];
}

/* Once per envelope block (1 ms) and at the end of the mask, not per sample:
 * fold the block's maximum into the envelope (ringing, which only decays, is
 * followed, while a new rise is judged against what came before it, not
 * against itself), decay it, and work out the level a new contact needs.
 * A pad quiet again goes back to IDLE and its fast path; the contact's
 * onset and peak stay for the neighbours' crosstalk decisions. */
static void rearm_block(const detect_pad_config_t *cfg, detect_pad_state_t *s, uint32_t t_us, uint16_t thr) {
    decay_env(s, t_us);
    if (s->blk_max > s->env) s->env = s->blk_max;
    s->blk_max = 0;
    uint32_t next = t_us + DETECT_ENV_BLOCK_US;
    uint8_t masked = 0;
    if (s->masked) {
        uint32_t mask_end = s->onset_us + cfg->mask_us;
        if (since(t_us, mask_end) < 0) {
            masked = 1;
            if (since(next, mask_end) > 0) next = mask_end; /* exactly at the mask's end */
        } else {
            s->masked = 0;
        }
    }
    s->blk_end_us = next;
    uint16_t level = s->env + (s->env >> 1);
    if (masked) {
        s->level = 0xFFFFu;
    } else if (level < thr) {
        s->level = thr;
        s->state = DETECT_IDLE;
    } else {
        s->level = level;
    }
}

static COLD void start_contact(detect_pad_state_t *s, uint16_t value, uint32_t t_us, uint16_t thr,
                               uint16_t scan_us) {
    crossing_at(&s->onset, s, value, t_us, thr, MAX_BACK_SAMPLES);
    s->onset_us = t_us;
    s->scan_end_us = t_us + scan_us;
    s->peak = value;
    s->above = 1;
    s->seg_before = 0;
    s->seg_peak = 0;
    s->falling = 0;
    s->seg_armed = 0;
    s->state = DETECT_SCAN;
}

/* The scan is over: interpolate the onset and work out when it can be decided. */
static void end_scan(detect_t *d, detect_pad_state_t *s, uint8_t pad) {
    s->onset_us = crossing_time(&s->onset);
    s->decide_us = decide_time(d, pad);
    s->state = DETECT_PENDING;
}

/* A rise after a fall reached the threshold: it may be the pad's own
 * contact starting after a neighbour's crosstalk (judged by rerise_check). */
static COLD void rerise_start(detect_pad_state_t *s, uint16_t value, uint32_t t_us, uint16_t thr) {
    crossing_at(&s->seg, s, value, t_us, thr, 1);
    s->seg_before = s->peak;
    s->seg_peak = value;
    s->seg_armed = 0;
}

/* The re-rise grew: once everything before it is crosstalk-sized next to
 * it, the onset moves to the re-rise. */
static COLD void rerise_check(detect_pad_state_t *s, const detect_pad_config_t *cfg) {
    if ((uint32_t)s->seg_before * 100u < (uint32_t)s->seg_peak * cfg->xtalk) {
        s->onset = s->seg;
        s->onset_us = s->seg.t_us;
        s->scan_end_us = s->onset_us + cfg->scan_us;
        s->seg_before = 0;
    }
}

static void set_prev(detect_pad_state_t *s, uint16_t value, uint32_t t_us) {
    s->prev_value = value;
    s->prev_us = t_us;
    s->have_prev = 1;
}

/* A SCAN sample after its falling/re-rise bookkeeping (seg_grew: a re-rise
 * started at this sample): the peak, a grown re-rise judged, the scan's end. */
static void scan_rest(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us,
                      uint8_t seg_grew) {
    const detect_pad_config_t *cfg = &d->pad[pad];
    if (value > s->peak) s->peak = value;
    if (value >= d->thr[pad] && s->above < 255) s->above++;
    if (value > s->seg_peak) {
        s->seg_peak = value;
        seg_grew = 1;
    }
    if (seg_grew && s->seg_before != 0) rerise_check(s, cfg);
    /* scan_end_us == onset_us + scan_us: the quick test first; the exact one
     * decides (they differ only for a pad left unsampled for half the
     * clock's range). */
    if (since(t_us, s->scan_end_us) >= 0 && since(t_us, s->onset_us) >= (int32_t)cfg->scan_us) end_scan(d, s, pad);
    set_prev(s, value, t_us);
}

COLD void detect_scan_rest(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us) {
    scan_rest(d, s, pad, value, t_us, 0);
}

OWN_FRAME uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t thr, uint16_t value, uint32_t t_us) {
    uint8_t state = s->state;
    if (state == DETECT_REARM) {
        /* A new envelope block, or a new contact: detect_rearm_step. */
        if (since(t_us, s->blk_end_us) >= 0 || value >= s->level) return DETECT_NEEDS_REARM;
        if (value > s->blk_max) s->blk_max = value;
    } else if (state == DETECT_SCAN) {
        /* A re-rise reaching the threshold: detect_step; a re-rise growing
         * or the scan's end: detect_scan_rest, after the changes made here,
         * which are the ones detect_step makes first. */
        if (value > s->prev_value) {
            if (value >= thr && (s->falling || s->seg_armed)) return DETECT_NEEDS_STEP;
            if (s->falling) s->seg_armed = 1;
            s->falling = 0;
        } else {
            s->falling = 1;
        }
        if (value > s->seg_peak) {
            if (s->seg_before != 0) return DETECT_NEEDS_SCAN_REST;
            s->seg_peak = value;
        }
        /* scan_end_us == onset_us + scan_us: before it, the scan is not over. */
        if (since(t_us, s->scan_end_us) >= 0) return DETECT_NEEDS_SCAN_REST;
        if (value > s->peak) s->peak = value;
        if (value >= thr && s->above < 255) s->above++;
    } else if (state != DETECT_PENDING) {
        if (value >= thr) return DETECT_NEEDS_STEP; /* IDLE: a contact starts */
    }
    set_prev(s, value, t_us);
    return DETECT_DONE;
}

/* A REARM sample at a new envelope block or reaching the level (its own
 * function: the common new block needs few registers, so it saves few). */
COLD void detect_rearm_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us) {
    uint16_t thr = d->thr[pad];
    if (since(t_us, s->blk_end_us) >= 0) {
        rearm_block(&d->pad[pad], s, t_us, thr);
        if (s->state == DETECT_IDLE) {
            if (value >= thr) start_contact(s, value, t_us, thr, d->pad[pad].scan_us);
            set_prev(s, value, t_us);
            return;
        }
    }
    if (value >= s->level) { /* level >= thr always */
        start_contact(s, value, t_us, thr, d->pad[pad].scan_us);
    } else if (value > s->blk_max) {
        s->blk_max = value;
    }
    set_prev(s, value, t_us);
}

/* The whole step, for the samples detect_sample_at does not finish itself:
 * a contact starting, a re-rise reaching the threshold, a new envelope block. */
COLD void detect_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us) {
    uint16_t thr = d->thr[pad];
    const detect_pad_config_t *cfg = &d->pad[pad];

    switch (s->state) {
    case DETECT_SCAN: {
        uint8_t seg_grew = 0;
        if (value <= s->prev_value) {
            s->falling = 1;
        } else {
            /* A rise after a fall: maybe the real contact starting after a
             * neighbour's crosstalk. It counts once it reaches the threshold,
             * and only if what follows dwarfs everything before it. */
            if (s->falling) s->seg_armed = 1;
            s->falling = 0;
            if (s->seg_armed && value >= thr) {
                rerise_start(s, value, t_us, thr);
                seg_grew = 1;
            }
        }
        scan_rest(d, s, pad, value, t_us, seg_grew);
        return;
    }
    case DETECT_PENDING:
        break;
    case DETECT_REARM:
        detect_rearm_step(d, s, pad, value, t_us);
        return;
    default:
        if (value >= thr) start_contact(s, value, t_us, thr, cfg->scan_us);
        break;
    }
    set_prev(s, value, t_us);
}

/* Another pad's contact within this pad's window that is loud enough to make
 * this one crosstalk. */
static uint8_t is_crosstalk(const detect_t *d, uint8_t pad) {
    const detect_pad_state_t *s = &d->st[pad];
    const detect_pad_config_t *cfg = &d->pad[pad];
    uint8_t xtalk = cfg->xtalk;
    if (xtalk == 0) return 0;
    uint16_t peak = s->peak;
    uint32_t peak100 = (uint32_t)peak * 100u;
    uint32_t onset = s->onset_us;
    int32_t xwin = (int32_t)cfg->xwin_us;
    /* With xtalk <= 100 % only a louder peak can make this one crosstalk:
     * a 16-bit compare spares most of the 32-bit work. */
    uint16_t louder_than = xtalk <= 100u ? peak : 0;
    for (uint8_t j = 0; j < d->npads; j++) {
        if (j == pad) continue;
        const detect_pad_state_t *o = &d->st[j];
        if (o->peak <= louder_than) continue;
        if (o->peak == 0 || o->above < DETECT_MIN_SAMPLES) continue; /* no contact, or a glitch */
        if (peak100 >= (uint32_t)o->peak * xtalk) continue;
        int32_t gap = since(onset, o->onset_us);
        if (gap < 0) gap = -gap;
        if (gap > xwin) continue;
        return 1;
    }
    return 0;
}

COLD uint8_t detect_poll_pad_slow(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out) {
    if (pad >= d->npads) return 0;
    detect_pad_state_t *s = &d->st[pad];
    if (s->state != DETECT_SCAN && s->state != DETECT_PENDING) return 0; /* the common case */
    const detect_pad_config_t *cfg = &d->pad[pad];
    if (s->state == DETECT_SCAN && since(now_us, s->onset_us) >= (int32_t)cfg->scan_us) end_scan(d, s, pad);
    if (s->state != DETECT_PENDING) return 0;
    if (since(now_us, s->decide_us) < 0) return 0; /* a neighbour may still be scanning */

    if (s->above < DETECT_MIN_SAMPLES) {
        /* A glitch: no contact, no ringing to wait out. */
        s->state = DETECT_IDLE;
        d->dropped_glitch++;
        return 0;
    }
    /* Deciding one pad leaves the onset and peak every other pad's decision
     * needs in place, so the order pads are decided in never matters. */
    uint8_t drop = is_crosstalk(d, pad);
    s->state = DETECT_REARM;
    s->env = s->peak;
    s->blk_max = 0;
    s->level = 0xFFFFu;
    s->blk_end_us = now_us; /* the next sample works out the level */
    s->step_at_us = s->onset_us + DETECT_DECAY_HALFLIFE_US / DECAY_STEPS_PER_HALFLIFE;
    s->masked = !drop;
    if (drop) {
        d->dropped_xtalk++;
        return 0;
    }
    out->pad = pad;
    out->is_slap = s->peak >= cfg->slap;
    out->peak = s->peak;
    out->onset_us = s->onset_us;
    return 1;
}

uint8_t detect_poll(detect_t *d, uint32_t now_us, detect_hit_t *out, uint8_t max) {
    uint8_t n = 0;
    for (uint8_t i = 0; i < d->npads; i++) {
        detect_hit_t h;
        /* The slow path: it also ends scans of pads no longer sampled. */
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
