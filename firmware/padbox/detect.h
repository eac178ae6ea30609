/*
 * detect.h - piezo slap detection for the pad box, in plain C.
 *
 * No Arduino or AVR headers: the same code runs in the sketch and in the host
 * unit tests (firmware/tests). The caller feeds one ADC sample per pad per
 * scan, stamped with the device time of its sample-and-hold in microseconds,
 * and polls once per scan for finished contacts.
 *
 * The input is biased at mid-supply (docs/wiring.md), so both half-waves of
 * the piezo reach the ADC. Per pad (after Edrumulus, for a table of hands):
 *   1. REST: the pad's rest point (the bias, plus drift) is a slow average of
 *      its quiet samples (Edrumulus' DC offset estimate); everything is
 *      judged on the deviation d = sample - rest, either sign. A noise floor
 *      (the level |d| stays under at rest, hum included) follows the quiet
 *      signal up quickly and down slowly; a contact must clear both the
 *      pad's threshold and 1.5 x that floor, so mains hum never starts one.
 *   2. RISE: the last DETECT_HIST samples of each pad are kept. When |d|
 *      reaches the threshold, the start of its rise is found in them: back
 *      from that sample while each step goes its way by at least
 *      DETECT_RISE_STEP counts (plus an eighth of the noise floor; a step of
 *      the hum is a few counts a sample, a hand's first sample tens), and
 *      no further than a step more than twice as steep as the one before it
 *      (plus the minimum): there a hand landed on a pad that was already
 *      moving that way (ringing, a neighbour's shake).
 *   3. ONSET: the contact's onset is the start of that rise, back-dated
 *      along the line through the rise's first two samples to the level
 *      before it, never before the last quiet sample: the moment of
 *      contact, whatever the strength or the polarity (the polarity is the
 *      sign of the first half-wave).
 *   4. SCAN for scan_us: keep the peak |d|, the samples at the ADC's rails
 *      (clipping), and the first half-wave: its peak, and when it fell below
 *      half of it. A first half-wave over within DETECT_XT_LOBE_US of the
 *      contact reaching its threshold is SHARP: table vibration, not a
 *      hand's push, which lasts longer, clipped or not. If a later rise of
 *      either sign grows past 1.5 x a sharp first half-wave (a hand's own
 *      ringing never does), the first part was a neighbour's shake: the
 *      onset moves to that rise (the player slapped a pad that was already
 *      shaking), and the shake's source cannot explain the new contact.
 *   5. DECIDE DETECT_XT_TOL_US + the longest scan + 1 ms after the onset,
 *      when every pad that could have caused it has its peak. Crosstalk is
 *      cancelled only forward in time (Edrumulus cancels by order of
 *      detection): a contact is dropped if it is sharp and the loudest other
 *      contact that began before it (within DETECT_XT_TOL_US of it, at most
 *      xwin_us earlier) makes it smaller than xtalk % of that one's peak. A
 *      clipped peak is estimated (after Edrumulus' overload correction):
 *      every sample at the rails adds half the clip level, so a hard slap
 *      that clips is still the louder. A contact with fewer than
 *      DETECT_MIN_SAMPLES samples over the threshold is an electrical
 *      glitch (static, a motor starting; Edrumulus' spike cancellation).
 *   6. Reported: a slap if the (estimated) peak reaches the slap threshold,
 *      else a touch. MASK: no new contact for mask_us after the onset unless
 *      it rises past twice the reported peak (the loud-hit escape). Then a
 *      new contact must rise past 1.5 x the pad's ringing envelope (the
 *      largest sample of the last 2 ms block, or the one before it halved).
 *      RING, at once after a contact dropped as crosstalk: the same, or a
 *      sum of the last four samples past 1.5 x that sum's envelope: a
 *      table's ringing (1.5..3 kHz) mostly cancels in it, the player's own
 *      push (0.3..1 ms one way) does not, so a shaken pad is not deaf while
 *      it rings. Only a slap that began after the shake can explain a
 *      contact that starts on a ringing pad. Back at rest, a pad is on its
 *      fast path again.

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
 * counts of deviation from the rest point (4.9 mV a count at the 5 V
 * reference) and microseconds. */
#define DETECT_DEFAULT_SLAP 200u       /* ~980 mV: a deliberate slap */
#define DETECT_DEFAULT_TOUCH 60u       /* ~290 mV: well above noise */
#define DETECT_DEFAULT_SCAN_US 2000u   /* a hand slap peaks 0.2..1.5 ms after contact */
#define DETECT_DEFAULT_MASK_US 30000ul /* nobody slaps the same pad twice in 30 ms */
#ifndef DETECT_DEFAULT_XTALK
#define DETECT_DEFAULT_XTALK 50u       /* percent of the loud peak */
#endif
#define DETECT_DEFAULT_XWIN_US 5000ul  /* table vibration arrives within a few ms */
/* Not settable: a contact needs this many samples at or above its threshold;
 * fewer is an electrical glitch (static, a motor starting), never a hit. */
#define DETECT_MIN_SAMPLES 3u
/* Not settable: the ringing envelope follows the signal in blocks of this length. */
#define DETECT_ENV_BLOCK_US 2000u
/* Not settable: the smallest step between two samples that starts a rise. */
#define DETECT_RISE_STEP 8u
/* Not settable: crosstalk is table vibration, whose first half-wave is over
 * (below half its peak) within this long of its onset; a hand's push lasts
 * longer, clipped or not. */
#ifndef DETECT_XT_LOBE_US
#define DETECT_XT_LOBE_US 650u
#endif
/* Not settable: a neighbour's vibration cannot start before the slap that
 * caused it; onsets are known to about this much. */
#define DETECT_XT_TOL_US 100u
/* Samples at or beyond these raw readings are at the rails (clipped). */
#define DETECT_CLIP_LO 2u
#define DETECT_CLIP_HI 1021u

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
    uint16_t peak;   /* counts of deviation, 0..1023 (clipped peaks estimated) */
    uint32_t onset_us;
} detect_hit_t;

enum { DETECT_IDLE = 0, DETECT_SCAN, DETECT_PENDING, DETECT_MASK, DETECT_RING };

/** The start of a contact's rise: the sample before it (t0, y0) and the
 * first two samples of it (y1 at t0 + dt1, y2 at t0 + dt1 + dt2). */
typedef struct {
    uint32_t t0;
    int16_t y0, y1, y2;
    uint16_t dt1, dt2;
    uint8_t n;   /* 1: y1 known, 2: y2 known too */
    int8_t dir;  /* +1 rising, -1 falling */
} detect_rise_t;

/* The last samples of each pad (deviation and the time's low 16 bits), for
 * finding the start of a contact's rise once it reaches the threshold. */
#define DETECT_HIST 5u

/** Per-pad running state (exposed so the sketch can size it statically). */
typedef struct {
    uint8_t state;
    uint8_t nf;              /* noise floor: |d| at rest, counts */
    uint8_t nf_count;        /* samples since the floor last came down */
    uint8_t above;           /* contact: samples at or above the threshold (saturating) */
    uint8_t clipped;         /* contact: samples at the rails (saturating) */
    uint8_t lobe_done;       /* contact: the first half-wave is over */
    uint8_t shaken;          /* contact: began on a pad still ringing from a neighbour's shake */
    uint8_t shake_src;       /* the pad whose slap shook it (0xFF: unknown) */
    int8_t pol;              /* contact: sign of its first half-wave */
    uint8_t have_prev;
    uint8_t hist_at;         /* where the next sample goes in hist */
    uint16_t base;           /* rest point, counts */
    int16_t base_frac;       /* deviations summed since base last moved (256 = one count) */
    uint16_t thr_now;        /* IDLE: what a contact needs (threshold or noise floor) */
    int16_t hist_d[DETECT_HIST];
    uint16_t hist_t[DETECT_HIST];
    detect_rise_t orise;     /* the contact's rise (its onset) */
    uint32_t onset_us;       /* onset (back-dated once the scan ends) */
    uint16_t peak;           /* |d| peak of the current or last contact (estimated if clipped) */
    uint16_t lobe;           /* peak of its first half-wave */
    uint16_t lobe_t;         /* when the first half-wave peaked (the time's low 16 bits) */
    uint16_t lobe_end_t;     /* when it fell below half its peak (or the scan ended) */
    uint16_t trig_t;         /* when the contact reached its threshold */
    uint16_t env;            /* ringing envelope (MASK/RING) */
    uint16_t level;          /* what a new contact needs (MASK/RING), per block */
    uint16_t blk_max;        /* largest |d| in the current envelope block */
    uint16_t env_lp;         /* RING: envelope of the 4-sample sum of d (ringing averages out) */
    uint16_t blk_lp;         /* RING: largest |4-sample sum| in the current block */
    uint16_t level_lp4;      /* RING: what a new contact's 4-sample sum needs */
    int16_t sum;             /* RING: the sum of the last four samples' d */
    union {                  /* (one field, by state: RAM is short) */
        uint32_t decide_us;  /* PENDING: when the crosstalk decision can be made */
        uint32_t blk_end_us; /* MASK, RING: when the envelope block ends */
    };
    uint32_t scan_end_us;    /* SCAN: when the peak search ends; MASK: when the mask ends */
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
    uint8_t decide_budget;         /* decisions still allowed now (0xFF: no limit); the
                                      firmware allows one a scan, so eight contacts
                                      ending together cannot stretch one scan */
} detect_t;

/** The factory settings of one pad. */
void detect_default_config(detect_pad_config_t *cfg);

/** The level at which a contact starts on a pad with these settings. */
uint16_t detect_start_threshold(const detect_pad_config_t *cfg);

/** Factory settings for npads pads (clamped to 1..DETECT_MAX_PADS), no contacts. */
void detect_init(detect_t *d, uint8_t npads);

/** Call after changing any d->pad[] setting: refreshes the cached values. */
void detect_settings_changed(detect_t *d);

/** Forget every contact in progress (the rest points and noise floors stay learnt). */
void detect_reset_state(detect_t *d);

/** The whole per-sample step, for the samples detect_sample_fast() does
 * not finish itself (the sample is already in the pad's history). */
void detect_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us);

/** A quiet pad's noise floor moved (or its count ran out): the slow part. */
void detect_floor_step(detect_pad_state_t *s, uint16_t raw, uint16_t thr);

/** The common samples, in a function of its own that needs no saved
 * registers: into the history, then a quiet pad, a pad mid-scan or a
 * ringing pad below its level in a few 16-bit operations. Returns
 * DETECT_DONE, or what must finish the sample. */
enum { DETECT_DONE = 0, DETECT_NEEDS_STEP, DETECT_NEEDS_FLOOR };
uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/** Feed one raw ADC sample (0..1023) of pad (s == &d->st[pad], pad < d->npads),
 * taken at device time t_us. */
static inline void detect_sample_at(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us) {
    uint8_t r = detect_sample_fast(s, raw, (uint16_t)t_us);
    if (r == DETECT_DONE) return;
    if (r == DETECT_NEEDS_FLOOR) detect_floor_step(s, raw, d->thr[pad]);
    else detect_step(d, s, pad, raw, t_us);
}

/** Feed one sample of one pad (0-based), taken at device time t_us. */
static inline void detect_sample(detect_t *d, uint8_t pad, uint16_t raw, uint32_t t_us) {
    if (pad >= d->npads) return;
    detect_sample_at(d, &d->st[pad], pad, raw, t_us);
}

/** The deviation of a raw sample from the pad's rest point, as a level (|d|). */
uint16_t detect_level(const detect_t *d, uint8_t pad, uint16_t raw);

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
    if (s->state != DETECT_PENDING) return 0; /* the common case */
    if ((int32_t)(now_us - s->decide_us) < 0) return 0;
    return detect_poll_pad_slow(d, pad, now_us, out);
}

static inline uint8_t detect_poll_pad(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out) {
    if (pad >= d->npads) return 0;
    return detect_poll_at(d, &d->st[pad], pad, now_us, out);
}

/** The level a new contact on this pad must reach now (0xFFFF: none can start). */
uint16_t detect_trigger_level(const detect_t *d, uint8_t pad);

#ifdef __cplusplus
}
#endif

#endif
