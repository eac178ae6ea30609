/*
 * detect.h - piezo slap detection for the pad box, in plain C.
 *
 * No Arduino or AVR headers: the same code runs in the sketch and in the host
 * unit tests (firmware/tests). The caller feeds one ADC sample per pad per
 * scan, stamped with the device time of its sample-and-hold in microseconds,
 * and polls once per scan for finished contacts.
 *
 * Per pad (the Edrumulus recipe, tuned for a table of slapping hands):
 *   1. IDLE: a sample at or above the pad's touch threshold (its slap
 *      threshold when touches are off) starts a contact. The onset is the
 *      threshold crossing, interpolated between the previous sample and
 *      this one, never the peak.
 *   2. SCAN for scan_us after the onset: keep the largest sample (the peak).
 *      If the signal stops rising and then rises again to a peak that
 *      dwarfs everything before it (the earlier part is below
 *      xtalk % of the new part), the earlier part was crosstalk from a
 *      neighbour and the onset moves to the new rise: a player who slaps
 *      0.5 ms after a loud neighbour keeps their own onset.
 *      A contact with fewer than DETECT_MIN_SAMPLES samples at or above the
 *      threshold is an electrical glitch: dropped, and it counts for no
 *      neighbour's crosstalk decision either.
 *   3. The contact then waits until xwin_us (plus the longest scan of any
 *      pad) after its onset, so that every pad whose onset lies within the
 *      crosstalk window has finished its own scan. It is dropped as
 *      crosstalk if another pad's contact with an onset within xwin_us of it
 *      has a peak P and this peak < P * xtalk / 100. Otherwise it is
 *      reported: a slap if its peak reached the slap threshold, else a touch
 *      (a feint).
 *   4. MASK: a reported contact masks its pad for mask_us after the onset.
 *      After that, and right away after a contact dropped as crosstalk, a
 *      new contact needs a sample at least 1.5 times the pad's envelope:
 *      the contact's peak and the maxima of the 1 ms blocks since, halved
 *      every DETECT_DECAY_HALFLIFE_US.
 *      Ringing only ever decays, so it never retriggers however long it
 *      lasts, while a fresh slap on a still-ringing pad rises far above it:
 *      the player on a pad shaken by a loud neighbour is still heard a
 *      moment later. The onset of such a contact is extrapolated back along
 *      its rising edge to the threshold.
 *
 * Times are uint32_t microseconds that wrap (every 71.6 minutes); all
 * comparisons use the signed difference, so the wrap is harmless.
 */
#ifndef PADBOX_DETECT_H
#define PADBOX_DETECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DETECT_MAX_PADS 8

/* Defaults (the protocol's suggested values, firmware/PROTOCOL.md), in ADC
 * counts (0..1023, 4.9 mV a count at the 5 V reference) and microseconds.
 * At the firmware's scan period for 8 pads (about 123 us on a quiet table,
 * measured in simavr and reported in HELLO) the times are, in samples of one
 * pad: scan 2000 us = 16, mask 30000 us = 244, crosstalk window 5000 us = 40,
 * envelope half-life 10000 us = 81. */
#define DETECT_DEFAULT_SLAP 200u       /* ~980 mV: a deliberate slap */
#define DETECT_DEFAULT_TOUCH 60u       /* ~290 mV: well above hum and noise */
#define DETECT_DEFAULT_SCAN_US 2000u   /* a hand slap peaks 0.5..1.5 ms after contact */
#define DETECT_DEFAULT_MASK_US 30000ul /* nobody slaps the same pad twice in 30 ms */
#define DETECT_DEFAULT_XTALK 50u       /* percent of the loud peak */
#define DETECT_DEFAULT_XWIN_US 5000ul  /* table vibration arrives well within 1 ms */
/* Not settable: how fast the retrigger envelope decays after a contact. */
#define DETECT_DECAY_HALFLIFE_US 10000u
/* Not settable: a contact needs this many samples at or above its threshold;
 * fewer is an electrical glitch (static, a motor starting), never a hit.
 * A hand's contact lasts a millisecond or more: 5 samples and up. */
#define DETECT_MIN_SAMPLES 3u
/* Not settable: the envelope follows the signal in blocks of this length. */
#define DETECT_ENV_BLOCK_US 1000u

/** Settings of one pad: the SET parameters of the wire protocol. */
typedef struct {
    uint16_t slap;    /* slap threshold, 1..1023: a peak at or above it is a slap */
    uint16_t touch;   /* touch threshold, 0..1023: detection starts here;
                         0 or >= slap turns touches off (detection starts at slap) */
    uint16_t scan_us; /* 0..20000: peak search after the onset */
    uint8_t xtalk;    /* 0..100 %: crosstalk ratio, 0 = off */
    uint32_t mask_us; /* 0..1000000: no new contact on the pad after an onset */
    uint32_t xwin_us; /* 0..100000: crosstalk window */
} detect_pad_config_t;

/** One reported contact. */
typedef struct {
    uint8_t pad;     /* 0-based here; the wire protocol adds 1 */
    uint8_t is_slap; /* 1 slap, 0 touch */
    uint16_t peak;   /* ADC counts 0..1023 */
    uint32_t onset_us;
} detect_hit_t;

enum { DETECT_IDLE = 0, DETECT_SCAN, DETECT_PENDING, DETECT_REARM };

/** A threshold crossing near two samples, interpolated only when needed
 * (a division is too slow to do on every crossing inside the scan loop). */
typedef struct {
    uint32_t t_us;  /* time of the first sample at or above the threshold */
    uint16_t dt_us; /* time since the sample before it (0: no interpolation) */
    uint16_t over;  /* sample - threshold */
    uint16_t span;  /* sample - previous sample */
    uint8_t max_back; /* extrapolate back at most this many sample periods */
} detect_crossing_t;

/** Per-pad running state (exposed so the sketch can size it statically). */
typedef struct {
    uint8_t state;
    uint8_t have_prev;
    uint8_t masked;          /* last contact was reported: the fixed mask applies */
    uint8_t falling;         /* the signal fell since the last rise (in a scan) */
    uint8_t seg_armed;       /* rising after a fall, not yet at the threshold */
    uint16_t prev_value;
    uint32_t prev_us;
    detect_crossing_t onset; /* onset of the current or last contact */
    uint32_t onset_us;       /* onset time (interpolated once the scan ends) */
    uint16_t peak;           /* peak of the current or last contact */
    uint8_t above;           /* its samples at or above the threshold (saturating) */
    detect_crossing_t seg;   /* latest re-rise inside the scan */
    uint16_t seg_before;     /* peak before that re-rise */
    uint16_t seg_peak;       /* peak since that re-rise */
    uint16_t env;            /* decaying envelope after a contact */
    uint16_t level;          /* what a new contact needs (REARM), per block */
    uint16_t blk_max;        /* largest sample in the current envelope block */
    uint32_t blk_end_us;     /* when that block ends */
    uint32_t step_at_us;     /* next decay step of env */
    uint32_t decide_us;      /* PENDING: when the crosstalk decision can be made */
    uint32_t scan_end_us;    /* SCAN: onset_us + the pad's scan_us (kept up to date) */
} detect_pad_state_t;

/** The whole detector: settings plus state of every pad. */
typedef struct {
    uint8_t npads;
    detect_pad_config_t pad[DETECT_MAX_PADS];
    detect_pad_state_t st[DETECT_MAX_PADS];
    uint16_t thr[DETECT_MAX_PADS]; /* start threshold of each pad (cached) */
    uint16_t max_scan_us;          /* longest scan of any pad (cached) */
    uint16_t dropped_xtalk;        /* contacts dropped as crosstalk since init */
    uint16_t dropped_glitch;       /* contacts dropped as too short (glitches) */
} detect_t;

/** The factory settings of one pad. */
void detect_default_config(detect_pad_config_t *cfg);

/** The level at which a contact starts on a pad with these settings. */
uint16_t detect_start_threshold(const detect_pad_config_t *cfg);

/** Factory settings for npads pads (clamped to 1..DETECT_MAX_PADS), no contacts. */
void detect_init(detect_t *d, uint8_t npads);

/** Call after changing any d->pad[] setting: refreshes the cached values. */
void detect_settings_changed(detect_t *d);

/** Forget every contact in progress (after a settings change). */
void detect_reset_state(detect_t *d);

/** The full per-sample step on pad's state s (s == &d->st[pad]);
 * detect_sample() calls it when a pad is not quiet. */
void detect_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us);

/** A REARM sample at a new envelope block or at the level (used by detect_sample_at). */
void detect_rearm_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us);

/** The rest of a SCAN sample after its falling/re-rise bookkeeping (used by detect_sample_at). */
void detect_scan_rest(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value, uint32_t t_us);

/** The common samples of a pad in the middle of a scan (or waiting for
 * its decision): a few compares on s, in a function of its own so it needs
 * few saved registers. Returns DETECT_DONE, or which of the functions below must
 * finish the sample (used by detect_sample_at). */
enum { DETECT_DONE = 0, DETECT_NEEDS_STEP, DETECT_NEEDS_SCAN_REST, DETECT_NEEDS_REARM };
uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t thr, uint16_t value, uint32_t t_us);

/** The same as detect_sample() for a caller that already holds the pad's
 * state (s == &d->st[pad], pad < d->npads). A quiet pad's and a ringing
 * pad's common samples are inline, so they cost a few compares even when
 * the compiler cannot inline across files (the Arduino IDE builds without
 * LTO). */
static inline void detect_sample_at(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t value,
                                    uint32_t t_us) {
    uint16_t thr = d->thr[pad];
    uint8_t state = s->state;
    if (state == DETECT_IDLE) {
        if (value >= thr) goto step;
    } else if (state == DETECT_REARM) {
        /* A new envelope block, or a new contact: detect_rearm_step. */
        if ((int32_t)(t_us - s->blk_end_us) >= 0 || value >= s->level) {
            detect_rearm_step(d, s, pad, value, t_us);
            return;
        }
        if (value > s->blk_max) s->blk_max = value;
    } else {
        goto fast;
    }
    s->prev_value = value;
    s->prev_us = t_us;
    s->have_prev = 1;
    return;
step:
    detect_step(d, s, pad, value, t_us);
    return;
fast:
    switch (detect_sample_fast(s, thr, value, t_us)) {
    case DETECT_DONE: break;
    case DETECT_NEEDS_SCAN_REST: detect_scan_rest(d, s, pad, value, t_us); break;
    case DETECT_NEEDS_REARM: detect_rearm_step(d, s, pad, value, t_us); break;
    default: detect_step(d, s, pad, value, t_us); break;
    }
}

/** Feed one sample of one pad (0-based), taken at device time t_us. */
static inline void detect_sample(detect_t *d, uint8_t pad, uint16_t value, uint32_t t_us) {
    if (pad >= d->npads) return;
    detect_sample_at(d, &d->st[pad], pad, value, t_us);
}

/**
 * Finish contacts whose scan and crosstalk window are over at now_us; write
 * up to max of them to out, oldest onset first; return how many. Call at
 * least once per scan, with now_us no earlier than the last sample time.
 */
uint8_t detect_poll(detect_t *d, uint32_t now_us, detect_hit_t *out, uint8_t max);

/**
 * The same for one pad (0-based): 1 and *out filled if it has a contact to
 * report now. The firmware spreads these calls over the scan, one pad per
 * sample slot, so no slot grows long; the order pads are decided in does
 * not change any decision.
 */
uint8_t detect_poll_pad_slow(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out);

/** detect_poll_pad() for a caller that holds the pad's state (s == &d->st[pad], pad < d->npads). */
static inline uint8_t detect_poll_at(detect_t *d, const detect_pad_state_t *s, uint8_t pad, uint32_t now_us,
                                     detect_hit_t *out) {
    /* Only a contact whose scan is over can be decided; detect_sample ends
     * the scan of a pad that is being sampled, as the firmware's always are. */
    if (s->state != DETECT_PENDING) return 0; /* the common case */
    /* Waiting for the neighbours' scans: one compare, not the slow path. */
    if ((int32_t)(now_us - s->decide_us) < 0) return 0;
    return detect_poll_pad_slow(d, pad, now_us, out);
}

static inline uint8_t detect_poll_pad(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out) {
    if (pad >= d->npads) return 0;
    return detect_poll_at(d, &d->st[pad], pad, now_us, out);
}

/** The level a new contact on this pad must reach at t_us (0xFFFF: masked). */
uint16_t detect_trigger_level(const detect_t *d, uint8_t pad, uint32_t t_us);

#ifdef __cplusplus
}
#endif

#endif
