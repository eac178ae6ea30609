/*
 * test_detect.c - host tests of the detection core (firmware/padbox/detect.c)
 * fed with synthetic piezo waveforms.
 *
 * Usage: test_detect <scenario.scn>...
 *
 * Each scenario is sampled the way the firmware samples it (8 pads one after
 * the other, SCAN_PERIOD_US per round), run through the detector and judged:
 * every expected slap and touch found once, with the right kind, its onset
 * within one scan period of the true threshold crossing; nothing else
 * reported. Each scenario also runs with the device clock about to wrap.
 * Then a few targeted unit tests of settings and edge cases.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../padbox/detect.h"
#include "../sim/scenario.h"

static unsigned SCAN_PERIOD_US = 116u; /* TEST_SCAN_PERIOD_US overrides */
#define MAX_HITS 256
/* An onset is right within this much of the moment of contact (presses apart). */
#define ONSET_TOL_US 300.0

static int failures = 0;

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            failures++;                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);      \
            printf(__VA_ARGS__);                             \
            printf("\n");                                    \
        }                                                    \
    } while (0)

typedef struct {
    detect_hit_t hit[MAX_HITS];
    int n;
} hits_t;

/* How slow the scans are for the ringing's decay (detect_slow): -1, as the
 * firmware has it at SCAN_PERIOD_US; else this (a test of step 16). */
static int slow_override = -1;

/* When a scan asks the detector for its decisions. */
typedef enum {
    POLL_AT_SCAN_END, /* detect_poll, every pad at once, as the scan ends */
    POLL_EACH_PAD     /* detect_poll_pad right after each pad's sample, as sim/hostrun.c */
} poll_when_t;

/* One scan from t0: the pads in turn, period_us / 8 apart, each sample
 * stamped with its time plus clock_offset; its hits are added to out. The
 * pads are polled even when out is full: polling takes a decision from
 * the detector. */
static void scan_once(scenario_t *s, detect_t *d, double t0, unsigned period_us, uint32_t clock_offset,
                      poll_when_t poll, hits_t *out) {
    for (int p = 0; p < d->npads; p++) {
        double t = t0 + p * (period_us / 8.0);
        detect_sample(d, (uint8_t)p, scn_adc(scn_pad_mv(s, p, t)), (uint32_t)t + clock_offset);
        if (poll != POLL_EACH_PAD) continue;
        detect_hit_t h;
        if (detect_poll_pad(d, (uint8_t)p, (uint32_t)t + clock_offset, &h) && out->n < MAX_HITS) out->hit[out->n++] = h;
    }
    if (poll == POLL_AT_SCAN_END) {
        detect_hit_t buf[DETECT_MAX_PADS];
        uint8_t n = detect_poll(d, (uint32_t)(t0 + period_us) + clock_offset, buf, DETECT_MAX_PADS);
        for (uint8_t i = 0; i < n && out->n < MAX_HITS; i++) out->hit[out->n++] = buf[i];
    }
}

/* Run a scenario through a detector, sampling like the firmware: pads in
 * turn, a scan every period_us until pace_from_us, then every
 * later_period_us (a burst's pacing as one step), the device clock
 * clock_offset on. */
static void run_scans(scenario_t *s, detect_t *d, uint32_t clock_offset, unsigned period_us, uint32_t pace_from_us,
                      unsigned later_period_us, hits_t *out) {
    out->n = 0;
    unsigned period = period_us;
    for (double t0 = 0; t0 < s->duration_us; t0 += period) {
        if (t0 >= pace_from_us) period = later_period_us;
        detect_slow = slow_override >= 0 ? (uint8_t)slow_override : detect_slowness((uint16_t)period);
        scan_once(s, d, t0, period, clock_offset, POLL_AT_SCAN_END, out);
    }
}

/* At the scan period in force, every scan alike. */
static void run(scenario_t *s, detect_t *d, uint32_t clock_offset, hits_t *out) {
    run_scans(s, d, clock_offset, SCAN_PERIOD_US, UINT32_MAX, SCAN_PERIOD_US, out);
}

static void judge(const char *name, scenario_t *s, const detect_t *d, const hits_t *h, uint32_t offset) {
    int used[MAX_HITS] = {0};
    (void)d;
    for (int i = 0; i < s->nevents; i++) {
        const scn_event_t *e = &s->ev[i];
        if (e->expect == SCN_EXPECT_NONE) continue;
        double truth = e->t_us; /* the moment of contact */
        int found = -1;
        for (int k = 0; k < h->n; k++) {
            if (used[k] || h->hit[k].pad != e->pad) continue;
            double onset = (double)(uint32_t)(h->hit[k].onset_us - offset);
            if (fabs(onset - truth) <= ONSET_TOL_US) {
                found = k;
                break;
            }
        }
        CHECK(found >= 0, "%s: pad %d contact at %u us (crossing %.0f): no hit within one scan period", name,
              e->pad + 1, e->t_us, truth);
        if (found < 0) continue;
        used[found] = 1;
        int want_slap = e->expect == SCN_EXPECT_SLAP;
        CHECK(h->hit[found].is_slap == want_slap, "%s: pad %d at %u us reported as %s, expected %s", name,
              e->pad + 1, e->t_us, h->hit[found].is_slap ? "slap" : "touch", want_slap ? "slap" : "touch");
    }
    for (int k = 0; k < h->n; k++)
        CHECK(used[k], "%s: unexpected hit pad %d at %u us peak %u (%s)", name, h->hit[k].pad + 1,
              (uint32_t)(h->hit[k].onset_us - offset), h->hit[k].peak, h->hit[k].is_slap ? "slap" : "touch");
    for (int k = 1; k < h->n; k++)
        CHECK((int32_t)(h->hit[k].onset_us - h->hit[k - 1].onset_us) >= 0, "%s: hits out of onset order", name);
}

static void test_scenario(const char *path) {
    static scenario_t s;
    const uint32_t offsets[] = {0, 0xFFFFFFFFu - 100000u};
    for (int o = 0; o < 2; o++) {
        scn_init(&s);
        if (scn_load(&s, path) != 0) {
            failures++;
            return;
        }
        if (s.button_mode || s.nsends) return; /* firmware-only scenarios */
        detect_t d;
        detect_init(&d, 8);
        static hits_t h;
        run(&s, &d, offsets[o], &h);
        char name[300];
        snprintf(name, sizeof name, "%s%s", path, o ? " (clock wrapping)" : "");
        judge(name, &s, &d, &h, offsets[o]);
        printf("%-60s %d hit(s), %u dropped as crosstalk, %u as glitches\n", name, h.n, d.dropped_xtalk,
               d.dropped_glitch);
    }
}

/* ---- targeted tests ---- */

static unsigned work_units_taken; /* by run_as_hostrun's scans, counted from what d->work had left */
static unsigned work_hook_calls;  /* detect_work_taken()'s calls */

/* The firmware's is padbox.ino's (it paces the sampler before heavy work,
 * and holds units back near its FIFO's end); this one overrides detect.c's
 * weak one, counts, and holds back every Nth unit when told to. */
static unsigned work_hold_every; /* 0: every unit taken; N: every Nth call's held back ... */
static unsigned work_holds;      /* ... and counted */
uint8_t detect_work_taken(void) {
    work_hook_calls++;
    if (!work_hold_every || work_hook_calls % work_hold_every) return 1;
    work_holds++;
    return 0;
}
static unsigned work_goes_on_calls; /* detect_work_goes_on()'s */
void detect_work_goes_on(void) { work_goes_on_calls++; }

/* Run a scenario as sim/hostrun.c (and so the bench's --host) does: the
 * first scan at 2 ms, a conversion every 18.5 us (148 us a scan), each pad
 * polled after its sample, DETECT_WORK_PER_SCAN units of heavy work a scan.
 * (hostrun.c's own loop stays its own: it is another program, with jitter
 * and a learning time of its own.) */
static void run_as_hostrun(scenario_t *s, detect_t *d, hits_t *out) {
    out->n = 0;
    detect_slow = detect_slowness(148u); /* (as hostrun's fixed slot: not what an earlier run() left) */
    for (double t0 = 2000.0; t0 < s->duration_us; t0 += 148.0) {
        scan_once(s, d, t0, 148u, 0, POLL_EACH_PAD, out);
        if (d->work != 0xFFu) work_units_taken += DETECT_WORK_PER_SCAN - d->work;
        d->work = DETECT_WORK_PER_SCAN;
    }
}

static int count_hits(scenario_t *s, detect_t *d, hits_t *h) {
    run(s, d, 0, h);
    return h->n;
}

static void test_touch_off(void) {
    static scenario_t s;
    scn_init(&s);
    s.duration_us = 200000;
    scn_add_hit(&s, 1, 50000, 500, SCN_EXPECT_NONE); /* 102 counts: between the default thresholds */
    detect_t d;
    detect_init(&d, 8);
    static hits_t h;
    CHECK(count_hits(&s, &d, &h) == 1 && !h.hit[0].is_slap, "defaults: a 102-count contact is a touch, got %d hits", h.n);
    detect_init(&d, 8);
    d.pad[1].touch = 0; /* touches off: detection starts at the slap threshold */
    detect_settings_changed(&d);
    CHECK(count_hits(&s, &d, &h) == 0, "touch 0: a touch-sized contact is ignored, got %d hits", h.n);
    detect_init(&d, 8);
    d.pad[1].touch = 300; /* >= slap: touches off too */
    detect_settings_changed(&d);
    CHECK(count_hits(&s, &d, &h) == 0, "touch >= slap: ignored, got %d hits", h.n);
    detect_init(&d, 8);
    d.pad[1].slap = 80; /* now the same contact is a slap */
    detect_settings_changed(&d);
    CHECK(count_hits(&s, &d, &h) == 1 && h.hit[0].is_slap, "slap 80: a 102-count contact is a slap");
}

static void test_xtalk_off(void) {
    static scenario_t s;
    scn_init(&s);
    s.duration_us = 200000;
    scn_add_hit(&s, 0, 50000, 4500, SCN_EXPECT_SLAP);
    scn_add_hit(&s, 1, 50150, 1400, SCN_EXPECT_NONE);
    s.ev[1].rise_us = 150;
    detect_t d;
    detect_init(&d, 8);
    static hits_t h;
    CHECK(count_hits(&s, &d, &h) == 1, "crosstalk on: one hit, got %d", h.n);
    d.pad[1].xtalk = 0;
    detect_settings_changed(&d);
    detect_reset_state(&d);
    CHECK(count_hits(&s, &d, &h) == 2, "crosstalk off on pad 2: both hits, got %d", h.n);
    detect_init(&d, 8);
    d.pad[1].xwin_us = 50; /* a window too short to cover the 150 us delay */
    detect_settings_changed(&d);
    CHECK(count_hits(&s, &d, &h) == 2, "window 50 us: both hits, got %d", h.n);
}

/* A light contact is a touch only if it is a finger's push: a sharp one
 * (a knock on the table) is dropped, a slow one reported (148 us a scan,
 * the firmware's sampler). */
static void test_touch_is_a_push(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const unsigned rise[] = {150u, 250u, 450u, 800u};
    for (int i = 0; i < 4; i++) {
        scn_init(&s);
        s.duration_us = 150000;
        scn_add_hit(&s, 3, 50000, 600, SCN_EXPECT_TOUCH);
        s.ev[0].rise_us = rise[i];
        detect_t d;
        detect_init(&d, 8);
        int n = count_hits(&s, &d, &h);
        if (rise[i] < 400u)
            CHECK(n == 0, "a 600 mV knock rising in %u us is no touch, got %d hits", rise[i], n);
        else
            CHECK(n == 1 && !h.hit[0].is_slap, "a 600 mV push rising in %u us is a touch, got %d hits", rise[i], n);
    }
    SCAN_PERIOD_US = keep;
}

static void test_mask(void) {
    /* Two slaps 20 ms apart on one pad: the default 30 ms mask swallows the
     * second one, a 10 ms mask lets it through. */
    static scenario_t s;
    scn_init(&s);
    s.duration_us = 200000;
    scn_add_hit(&s, 2, 50000, 3000, SCN_EXPECT_SLAP);
    scn_add_hit(&s, 2, 70000, 3000, SCN_EXPECT_SLAP);
    s.ev[0].ring = 0.0;
    s.ev[1].ring = 0.0;
    detect_t d;
    detect_init(&d, 8);
    static hits_t h;
    CHECK(count_hits(&s, &d, &h) == 1, "mask 30 ms: one hit, got %d", h.n);
    detect_init(&d, 8);
    d.pad[2].mask_us = 10000;
    detect_settings_changed(&d);
    CHECK(count_hits(&s, &d, &h) == 2, "mask 10 ms: two hits, got %d", h.n);
}

static void test_onset_not_peak(void) {
    /* A slow push (rise 2 ms): the peak comes 2 ms after the onset. */
    static scenario_t s;
    scn_init(&s);
    s.duration_us = 100000;
    scn_add_hit(&s, 0, 30000, 3000, SCN_EXPECT_SLAP);
    s.ev[0].rise_us = 2000;
    detect_t d;
    detect_init(&d, 8);
    d.pad[0].scan_us = 4000;
    detect_settings_changed(&d);
    static hits_t h;
    CHECK(count_hits(&s, &d, &h) == 1, "slow push: one hit");
    if (h.n == 1) {
        double truth = s.ev[0].t_us;
        CHECK(fabs((double)h.hit[0].onset_us - truth) <= SCAN_PERIOD_US, "onset %u is the contact %.0f, not the peak",
              h.hit[0].onset_us, truth);
        CHECK(h.hit[0].peak >= 600, "peak found after the onset: %u", h.hit[0].peak);
    }
}

/* Add a hit with its waveform's shape (scn_add_hit's defaults otherwise). */
static void add_shaped(scenario_t *s, int pad0, uint32_t t_us, double mv, int expect, double rise, double ring, double hz,
                       double tau, double pol) {
    scn_add_hit(s, pad0, t_us, mv, expect);
    scn_event_t *e = &s->ev[s->nevents - 1];
    e->rise_us = rise;
    e->ring = ring;
    e->hz = hz;
    e->tau_us = tau;
    e->pol = pol;
}

/* Step 18: within the mask, a contact over twice the reported peak is
 * reported only if it is a hand's push (its first half-wave longer than a
 * shake's): a sharp one is the table's, however loud (a neighbour's hard
 * slap shaking a pad that reported a soft one). */
static void test_mask_escape_is_a_hand(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const double rise[] = {100.0, 500.0}; /* a shake's sharp half-wave (200 us), a hand's push (1 ms) */
    for (int i = 0; i < 2; i++) {
        scn_init(&s);
        s.duration_us = 150000;
        add_shaped(&s, 2, 50000, 1300, SCN_EXPECT_SLAP, 700, 0.0, 1000, 3000, 1);
        add_shaped(&s, 2, 62000, 4000, i ? SCN_EXPECT_SLAP : SCN_EXPECT_NONE, rise[i], 0.5, 1900, 3000, 1);
        detect_t d;
        detect_init(&d, 8);
        int n = count_hits(&s, &d, &h);
        CHECK(n >= 1 && h.hit[0].peak < 400u, "the soft slap is reported (%d hits, peak %u)", n, n ? h.hit[0].peak : 0u);
        if (i == 0)
            CHECK(n == 1, "a 4 V sharp half-wave 12 ms into the mask is the table's: %d hit(s)", n);
        else
            CHECK(n == 2 && h.hit[1].is_slap && h.hit[1].onset_us > 61000u && h.hit[1].onset_us < 62300u,
                  "a 4 V hand's push 12 ms into the mask is reported (the escape): %d hit(s)", n);
    }
    SCAN_PERIOD_US = keep;
}

/* The hit of a pad nearest to t_us (-1: none within 3 ms). */
static int hit_near(const hits_t *h, int pad0, double t_us) {
    int best = -1;
    for (int k = 0; k < h->n; k++) {
        double dt = fabs((double)h->hit[k].onset_us - t_us);
        if (h->hit[k].pad == pad0 && dt <= 3000.0 && (best < 0 || dt < fabs((double)h->hit[best].onset_us - t_us)))
            best = k;
    }
    return best;
}

/* A soft slap landing on a pad still ringing hard from a neighbour's shake
 * (the ringing as big as the push): found by the low-passed deviation, in
 * which the table's ringing cancels and the push does not; the shake itself
 * gives no hit (148 us a scan, as the firmware). Its onset is found within
 * RINGING_ONSET_TOL_US: a slow push under a ringing as big as it shows
 * itself late (README, "What is not there yet"). */
#define RINGING_ONSET_TOL_US 450.0
/* A contact of a scenario built in a test: pad (0-based), moment of contact, and its waveform. */
typedef struct {
    int pad0;
    uint32_t t_us;
    double mv;
    int expect;
    double rise, ring, hz, tau, pol;
} shaped_t;

/* Add n contacts to s, each shifted by shift us (the samples' phase), and
 * run them through d, set up afresh, at the scan period in force; h gets
 * the hits, d keeps what it learnt. (s: a scenario with its electrical
 * conditions set.) */
static void add_all_shaped(scenario_t *s, const shaped_t *ev, int n, uint32_t shift) {
    for (int i = 0; i < n; i++)
        add_shaped(s, ev[i].pad0, ev[i].t_us + shift, ev[i].mv, ev[i].expect, ev[i].rise, ev[i].ring, ev[i].hz, ev[i].tau,
                   ev[i].pol);
}

static void run_shaped_on(scenario_t *s, const shaped_t *ev, int n, uint32_t shift, detect_t *d, hits_t *h) {
    add_all_shaped(s, ev, n, shift);
    detect_init(d, 8);
    run(s, d, 0, h);
}

/* The same on a detector of its own (what it learnt is not looked at). */
static void run_shaped_in(scenario_t *s, const shaped_t *ev, int n, uint32_t shift, hits_t *h) {
    detect_t d;
    run_shaped_on(s, ev, n, shift, &d, h);
}

/* s set up afresh as 150 ms of a quiet table with noise_mv of noise. */
static void quiet_table(scenario_t *s, double noise_mv) {
    scn_init(s);
    s->duration_us = 150000;
    s->noise_mv = noise_mv;
}

/* The same in 150 ms of a quiet table with noise_mv of noise. */
static void run_shaped(scenario_t *s, const shaped_t *ev, int n, uint32_t shift, double noise_mv, hits_t *h) {
    quiet_table(s, noise_mv);
    run_shaped_in(s, ev, n, shift, h);
}

/* One phase of the sweeps below: the events through the front end (gain),
 * the samples shifted by shift us, in duration_us of a quiet table with 5
 * mV of noise. */
static void run_at_phase(scenario_t *s, hits_t *h, const shaped_t *ev, int n, uint32_t duration_us, double gain,
                         uint32_t shift) {
    quiet_table(s, 5);
    s->duration_us = duration_us;
    for (int p = 0; p < SCN_PADS; p++) s->gain[p] = gain;
    run_shaped_in(s, ev, n, shift, h);
}

/* Whether the contact on pad0 at t_us is found as a slap in h (hit_near);
 * if so and worst is not NULL, its onset error goes into *worst when
 * larger than the one there. */
static int found_as_slap(const hits_t *h, int pad0, double t_us, double *worst) {
    int k = hit_near(h, pad0, t_us);
    if (k < 0 || !h->hit[k].is_slap) return 0;
    double err = (double)h->hit[k].onset_us - t_us;
    if (worst && fabs(err) > fabs(*worst)) *worst = err;
    return 1;
}

/* Sweep the samples' phase: run ev (n contacts) at every 8 us of a 148 us
 * scan, in duration_us of a quiet table with 5 mV of noise, every pad's
 * front end of gain `gain` (scenario.h's gain line: 1, the waveforms at
 * the pin; 0.7, through docs/wiring.md's capacitor across the disc).
 * Returns at how many phases contact `which` was not found as a slap;
 * *worst gets its largest onset error where it was, *phases how many
 * phases were run, and *other_hits (unless NULL) at how many phases its
 * pad reported any other hit too. */
static int slap_lost_at_phases(const shaped_t *ev, int n, uint32_t duration_us, double gain, int which, double *worst,
                               int *phases, int *other_hits) {
    static scenario_t s;
    static hits_t h;
    int lost = 0;
    *worst = 0.0;
    *phases = 0;
    if (other_hits) *other_hits = 0;
    for (uint32_t shift = 0; shift < 148u; shift += 8u, (*phases)++) {
        run_at_phase(&s, &h, ev, n, duration_us, gain, shift);
        int k = hit_near(&h, ev[which].pad0, s.ev[which].t_us);
        if (other_hits) {
            int on_pad = 0;
            for (int j = 0; j < h.n; j++) on_pad += h.hit[j].pad == ev[which].pad0 && j != k;
            if (on_pad) (*other_hits)++;
        }
        lost += !found_as_slap(&h, ev[which].pad0, s.ev[which].t_us, worst);
    }
    return lost;
}

/* The sweeps' usual check, at 148 us a scan: contact `which` of ev found
 * as a slap at every phase of the samples and, unless tol_us is negative,
 * dated within tol_us of its contact at every one. `what` names the case
 * in a failure. */
static void check_found_at_every_phase(const shaped_t *ev, int n, uint32_t duration_us, double gain, int which,
                                       double tol_us, const char *what) {
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    double worst;
    int phases;
    int lost = slap_lost_at_phases(ev, n, duration_us, gain, which, &worst, &phases, NULL);
    CHECK(lost == 0, "%s: lost at %d of %d phases", what, lost, phases);
    if (tol_us >= 0.0)
        CHECK(fabs(worst) <= tol_us, "%s: dated %+.0f us off its contact at worst (%.0f allowed)", what, worst, tol_us);
    SCAN_PERIOD_US = keep;
}

/* At how many of the 19 sample phases (every 8 us) some hit came on pad0. */
static int phases_with_a_hit_on(const shaped_t *ev, int n, uint32_t duration_us, double gain, uint8_t pad0,
                                int *phases) {
    static scenario_t s;
    static hits_t h;
    int with = 0;
    *phases = 0;
    for (uint32_t shift = 0; shift < 148u; shift += 8u, (*phases)++) {
        run_at_phase(&s, &h, ev, n, duration_us, gain, shift);
        for (int j = 0; j < h.n; j++)
            if (h.hit[j].pad == pad0) {
                with++;
                break;
            }
    }
    return with;
}

static void test_hand_on_ringing_pad(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    /* the shake's peak, the slap's peak and rise (mV, us) */
    const double cases[][3] = {{1600.0, 1250.0, 750.0}, {2400.0, 1500.0, 500.0}};
    for (int i = 0; i < 2; i++) {
        const shaped_t ev[] = {
            {0, 50000, 12000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 6000, 1},                       /* a neighbour's hard slap */
            {1, 50700, cases[i][0], SCN_EXPECT_NONE, 150, 0.9, 2300, 3500, -1},                /* its shake on pad 2 */
            {1, 52900, cases[i][1], SCN_EXPECT_SLAP, cases[i][2], 0.5, 1100, 5000, 1},         /* 2.2 ms later, a slap */
        };
        for (uint32_t shift = 0; shift < 148u; shift += 37u) {
            run_shaped(&s, ev, 3, shift, 8, &h);
            int k = hit_near(&h, 1, s.ev[2].t_us);
            CHECK(k >= 0 && h.hit[k].is_slap, "a %.0f mV slap in a %.0f mV shake's ringing: found as a slap (shift %u us)",
                  cases[i][1], cases[i][0], shift);
            if (k >= 0)
                CHECK(fabs((double)h.hit[k].onset_us - s.ev[2].t_us) <= RINGING_ONSET_TOL_US, "... dated %d us off (shift %u us)",
                      (int)((double)h.hit[k].onset_us - s.ev[2].t_us), shift);
            int shakes = 0;
            for (int j = 0; j < h.n; j++)
                if (h.hit[j].pad == 1 && (double)h.hit[j].onset_us < s.ev[2].t_us - RINGING_ONSET_TOL_US) shakes++;
            CHECK(shakes == 0, "the shake before it is no hit (%d)", shakes);
        }
    }
    SCAN_PERIOD_US = keep;
}

/* Step 23: a bench round (seed 20261201, table_012, round 62): a 9.7 V
 * slap shakes pad 8 (2.4 V, ringing at 2.4 kHz), and 0.7 ms after the
 * shake began that player's own soft slap lands on it (1.9 V, a 655 us
 * rise, the other way). The low-passed deviation finds the push ~550 us
 * in, under the ringing's crest; dated from there back (step 23), not
 * from the crest the walk back stops at, its onset is within
 * LP_PUSH_ONSET_TOL_US at every phase of the samples: 73-337 us late
 * over the 19 (2.16.0, without step 23: -DDETECT_LP_BACK_US=0u, 73-513).
 * (Step 37's report date does not apply here: the push is found within
 * four samples of the end of the shake's first half-wave. 329 us late at
 * worst since 2.36.0; test_push_on_ringing_reported_by_its_shape.) */
#define LP_PUSH_ONSET_TOL_US 350.0
static void test_push_on_ringing_dated_back(void) {
    const shaped_t ev[] = {
        {0, 50000, 9723, SCN_EXPECT_SLAP, 175, 0.4, 1779, 6116, -1},  /* the neighbour's sharp slap */
        {7, 50354, 2411, SCN_EXPECT_NONE, 177, 0.9, 2421, 3691, -1},  /* its shake on pad 8 */
        {7, 51046, 1941, SCN_EXPECT_SLAP, 655, 0.47, 812, 5097, 1},   /* the player's soft slap */
    };
    check_found_at_every_phase(ev, 3, 150000u, 1.0, 2, LP_PUSH_ONSET_TOL_US,
                               "a soft slap on a pad ringing from a neighbour's shake, found by the low-passed deviation");
}

/* Step 37: the same soft slap 1.19 and 1.59 ms after the shake began, its
 * push found well after the shake's first half-wave ended: reported at
 * the date the rise's shape gives (4 - 3.75 x the newest sample's share
 * of the low-passed deviation, in sample gaps), it is within 150 us of
 * its contact at every phase of the samples (97 and 135 us at worst;
 * reported at step 23's date, -DDETECT_REPORT_DATE=0: 273 and 269 us
 * late). */
static void test_push_on_ringing_reported_by_its_shape(void) {
    const int32_t after[2] = {1192, 1592};
    for (int k = 0; k < 2; k++) {
        const shaped_t ev[] = {
            {0, 50000, 9723, SCN_EXPECT_SLAP, 175, 0.4, 1779, 6116, -1},                /* the neighbour's sharp slap */
            {7, 50354, 2411, SCN_EXPECT_NONE, 177, 0.9, 2421, 3691, -1},                /* its shake on pad 8 */
            {7, 50354 + after[k], 1941, SCN_EXPECT_SLAP, 655, 0.47, 812, 5097, 1},      /* the player's soft slap */
        };
        char what[48];
        snprintf(what, sizeof what, "a soft slap %d us into a shake", (int)after[k]);
        check_found_at_every_phase(ev, 3, 150000u, 1.0, 2, 150.0, what);
    }
}

/* A hand landing on a neighbour's shake that had just begun on a pad at
 * rest (a knee in the rise, or a first half-wave that turned and rose
 * again): the onset is the hand's, not the shake's, whatever the phase of
 * the samples. */
static void test_knee(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const shaped_t ev[] = {
        {0, 49400, 1600, SCN_EXPECT_SLAP, 600, 0.5, 1200, 5000, 1},  /* a quiet first slapper */
        {1, 49950, 520, SCN_EXPECT_NONE, 180, 0.8, 2100, 2700, 1},   /* its shake on pad 2 */
        {1, 50300, 11000, SCN_EXPECT_SLAP, 160, 0.6, 1400, 3500, 1}, /* then the hard slap there */
    };
    for (uint32_t shift = 0; shift < 148u; shift += 37u) {
        run_shaped(&s, ev, 3, shift, 5, &h);
        int k = hit_near(&h, 1, s.ev[2].t_us);
        CHECK(k >= 0, "the hard slap after the shake is found (shift %u us)", shift);
        if (k >= 0)
            CHECK(fabs((double)h.hit[k].onset_us - s.ev[2].t_us) <= 150.0,
                  "... at the hand's onset (%d us off, shift %u us), not the shake's",
                  (int)((double)h.hit[k].onset_us - s.ev[2].t_us), shift);
    }
    SCAN_PERIOD_US = keep;
}

/* Each disc's polarity is learnt from the hands' contacts on it; a sharp
 * knock against it is then the table's, never the player's. */
static void test_disc_learnt(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    scn_init(&s);
    s.duration_us = 400000;
    s.noise_mv = 5;
    for (int i = 0; i < 3; i++) /* three slaps on a disc wired the other way round */
        add_shaped(&s, 2, (uint32_t)(50000 + 80000 * i), 3000, SCN_EXPECT_SLAP, 400, 0.4, 1200, 4000, -1);
    add_shaped(&s, 2, 300000, 1800, SCN_EXPECT_NONE, 140, 0.8, 2200, 3000, 1); /* a knock the other way */
    detect_t d;
    detect_init(&d, 8);
    run(&s, &d, 0, &h);
    CHECK(d.st[2].disc == -1, "pad 3's disc learnt as reversed (%d)", d.st[2].disc);
    CHECK(h.n == 3, "three slaps and no hit for the knock against the disc, got %d hits", h.n);
    /* and without the learning the same knock is a slap (nothing else explains it) */
    scn_init(&s);
    s.duration_us = 400000;
    s.noise_mv = 5;
    add_shaped(&s, 2, 300000, 1800, SCN_EXPECT_NONE, 140, 0.8, 2200, 3000, 1);
    detect_init(&d, 8);
    run(&s, &d, 0, &h);
    CHECK(h.n == 1, "a lone knock on a disc not yet learnt is reported, got %d hits", h.n);
    SCAN_PERIOD_US = keep;
}

/* Each pair's vibration delay is learnt from shakes only one slap could
 * have made (here two solo slaps, one on each pad); once known, a slap that
 * lands on the neighbour much sooner than vibration could get there is a
 * player's, not the loud slap's shake, however it looks. */
static void test_pair_delay_learnt(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const uint32_t delay = 1200u; /* pads 1 and 4 */
    for (int learn = 0; learn < 2; learn++) {
        scn_init(&s);
        s.duration_us = 400000;
        s.noise_mv = 5;
        if (learn) {
            /* each of the two slaps alone once: its shake on the other pad */
            add_shaped(&s, 0, 50000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1);
            add_shaped(&s, 3, 50000 + delay, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1);
            add_shaped(&s, 3, 150000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1);
            add_shaped(&s, 0, 150000 + delay, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, -1);
        }
        /* a clipped slap on pad 1; 400 us later a sharp one on pad 4, quieter: it looks like a shake */
        add_shaped(&s, 0, 300000, 12000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 6000, 1);
        add_shaped(&s, 3, 300400, 2600, SCN_EXPECT_SLAP, 150, 0.5, 1300, 5000, 1);
        add_shaped(&s, 3, 300000 + delay, 1700, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1);
        detect_t d;
        detect_init(&d, 8);
        run(&s, &d, 0, &h);
        uint16_t learnt = detect_pair_delay(&d, 0, 3);
        int k = hit_near(&h, 3, 300400.0);
        if (learn) {
            CHECK(learnt >= delay - 200u && learnt <= delay + 150u, "pads 1-4's delay learnt as %u us (true %u)", learnt,
                  delay);
            CHECK(detect_pair_delay(&d, 3, 0) == learnt, "... the same either way round (%u)", detect_pair_delay(&d, 3, 0));
            CHECK(detect_pair_delay(&d, 0, 1) == 0, "a pair never shaken is not known (%u)", detect_pair_delay(&d, 0, 1));
            CHECK(k >= 0 && h.hit[k].is_slap, "with the delay known, the slap 0.4 ms after the loud one is found");
            CHECK(h.n == 4, "the four slaps and nothing else, got %d hits", h.n);
        } else {
            CHECK(learnt == 0, "nothing learnt without a sure shake (%u)", learnt);
            /* (what makes the learning worth its RAM: this test means nothing if the slap is found anyway) */
            CHECK(k < 0, "without it, that slap is taken for the loud one's shake");
        }
    }
    /* One observation is not enough: a single shake teaches nothing yet. */
    scn_init(&s);
    s.duration_us = 200000;
    s.noise_mv = 5;
    add_shaped(&s, 0, 50000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1);
    add_shaped(&s, 3, 50000 + delay, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1);
    detect_t d;
    detect_init(&d, 8);
    run(&s, &d, 0, &h);
    CHECK(detect_pair_delay(&d, 0, 3) == 0, "one shake alone: not known yet (%u)", detect_pair_delay(&d, 0, 3));
    SCAN_PERIOD_US = keep;
}

/* Step 24: the same on a pad already moving. Pad 2's slap shakes pad 4,
 * which still rings from it when pad 1's loud slap lands; a quieter slap
 * on pad 4 0.4 ms later, far sooner than pads 1-4's learnt delay, is the
 * player's there too, at every phase of the samples (2.19.0, whose rule
 * held only on a pad at rest, -DDETECT_PAIR_MOVING=0: lost at 19 of 19). */
static void test_pair_delay_on_a_moving_pad(void) {
    const shaped_t ev[] = {
        /* each of pads 1 and 4 slapped alone once: pads 1-4's delay (1.2 ms) learnt */
        {0, 50000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
        {3, 51200, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        {3, 150000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
        {0, 151200, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, -1},
        /* pad 2's slap, and its shake on pad 4, ringing on */
        {1, 299000, 3000, SCN_EXPECT_SLAP, 300, 0.5, 1200, 5000, 1},
        {3, 299600, 900, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        /* pad 1's clipped slap; 0.4 ms later the quieter one on pad 4; pad 1's shake there at 1.2 ms */
        {0, 300000, 12000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 6000, 1},
        {3, 300400, 2600, SCN_EXPECT_SLAP, 150, 0.5, 1300, 5000, 1},
        {3, 301200, 1700, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
    };
    check_found_at_every_phase(ev, 9, 400000u, 1.0, 7, 150.0,
                               "a slap 0.4 ms after a loud neighbour's on a pad still ringing, the pair's delay known");
}

/* Step 25 (since 2.21.0): once known, a pair's delay moves a unit (32 us)
 * toward each sure observation, so one learnt short from its first two
 * shakes comes up to the table's (2.20.0, -DDETECT_PAIR_MEDIAN=0: it
 * stayed the least, 1,088 us here). */
static void test_pair_delay_follows_its_shakes(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const uint32_t early[] = {1000u, 1050u}, delay = 1250u; /* pads 1 and 4 */
    scn_init(&s);
    s.duration_us = 1200000;
    s.noise_mv = 5;
    uint32_t t = 50000u;
    for (int i = 0; i < 10; i++, t += 100000u) { /* pad 1 slapped alone ten times: its shake on pad 4 */
        add_shaped(&s, 0, t, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1);
        add_shaped(&s, 3, t + (i < 2 ? early[i] : delay), 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1);
    }
    detect_t d;
    detect_init(&d, 8);
    run(&s, &d, 0, &h);
    uint16_t learnt = detect_pair_delay(&d, 0, 3);
    CHECK(h.n == 10, "the ten slaps and none of their shakes, got %d hits", h.n);
    CHECK(learnt + 150u >= delay && learnt <= delay + 150u,
          "learnt short from its first two shakes (%u and %u us), pads 1-4's delay comes up to %u us after eight at %u", early[0],
          early[1], learnt, delay);
    SCAN_PERIOD_US = keep;
}

/* Run ev (n contacts) at 4 phases of a 148 us scan, on a quiet table of
 * duration_us with 5 mV of noise. Returns at how many phases contact
 * `which` was not found as a slap; *unlearnt gets at how many the pairs
 * known[0..nk) were not all learnt by the end or the pair `unknown` was
 * (pads from 0), *phases how many phases were run. */
static int slap_lost_with_pairs(const shaped_t *ev, int n, uint32_t duration_us, int which, const uint8_t (*known)[2],
                                int nk, const uint8_t unknown[2], int *unlearnt, int *phases) {
    static scenario_t s;
    static hits_t h;
    int lost = 0;
    *unlearnt = 0;
    *phases = 0;
    for (uint32_t shift = 0; shift < 148u; shift += 37u, (*phases)++) {
        quiet_table(&s, 5);
        s.duration_us = duration_us;
        detect_t d;
        run_shaped_on(&s, ev, n, shift, &d, &h);
        int wrong = detect_pair_delay(&d, unknown[0], unknown[1]) != 0;
        for (int i = 0; i < nk; i++) wrong |= detect_pair_delay(&d, known[i][0], known[i][1]) == 0;
        *unlearnt += wrong;
        lost += !found_as_slap(&h, ev[which].pad0, s.ev[which].t_us, NULL);
    }
    return lost;
}

/* Pads 1-2 and 2-4 taught their delays (d12, d24 us: each slapped alone,
 * shaking the other), then round's three contacts from 450 ms on, at 4
 * phases of a 148 us scan: at how many of them round[which] was not found
 * as a slap. Checks that pads 1-2 and 2-4 were learnt and 1-4 was not. */
static int lost_with_two_pairs_known(uint32_t d12, uint32_t d24, const shaped_t round[3], int which) {
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    const shaped_t ev[] = {
        {0, 50000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
        {1, 50000 + d12, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        {1, 150000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
        {0, 150000 + d12, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, -1},
        {1, 250000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
        {3, 250000 + d24, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        {3, 350000, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
        {1, 350000 + d24, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        round[0], round[1], round[2],
    };
    const uint8_t known[][2] = {{0, 1}, {1, 3}}, not_known[2] = {0, 3};
    int phases, unknown;
    int lost = slap_lost_with_pairs(ev, 11, 550000u, 8 + which, known, 2, not_known, &unknown, &phases);
    CHECK(unknown == 0, "pads 1-2 and 2-4 learnt, pads 1-4 not, at every phase (not so at %d of %d)", unknown, phases);
    SCAN_PERIOD_US = keep;
    return lost;
}

/* Step 25's bound (since 2.21.0): a pair not yet known is bounded below through a third pad
 * whose pairs with both are known: pads 1-2 0.4 ms, pads 2-4 1.6 ms, so
 * vibration takes at least 1.2 ms from pad 1 to pad 4, and a quieter
 * slap on pad 4 0.4 ms after pad 1's loud one is the player's (-DDETECT_PAIR_BOUND_EARLY_US=0: taken for pad 1's shake). */
static void test_pair_delay_bound_through_a_third_pad(void) {
    /* pad 1's clipped slap; 0.4 ms later the quieter one on pad 4; pad 1's shake there at 1.3 ms */
    const shaped_t round[] = {
        {0, 450000, 12000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 6000, 1},
        {3, 450400, 2600, SCN_EXPECT_SLAP, 150, 0.5, 1300, 5000, 1},
        {3, 451300, 1700, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
    };
    int lost = lost_with_two_pairs_known(400u, 1600u, round, 1);
    CHECK(lost == 0, "a slap 0.4 ms after a loud one, sooner than the pads' bound: lost at %d of 4 phases", lost);
}

/* Step 31 (since 2.27.0): a pair not yet known is bounded above through a
 * third pad whose pairs with both are known: pads 1-2 0.4 ms, pads 2-4
 * 0.6 ms, so vibration takes at most 1.0 ms from pad 1 to pad 4. Pad 1's
 * hard slap shakes pad 4 0.8 ms later, under its touch threshold; 2 ms
 * after pad 1's, pad 4's player lands a clipped slap, at the rails as
 * long as pad 1's was, so no size tells it from a shake: it is the
 * player's, found at every phase (-DDETECT_PAIR_BOUND_LATE_US=0: dropped
 * as pad 1's shake at 3 of 4 phases). */
static void test_pair_delay_most_through_a_third_pad(void) {
    /* pad 1's clipped slap, its faint shake on pad 4 at 0.8 ms, pad 4's clipped slap at 2 ms */
    const shaped_t round[] = {
        {0, 450000, 12000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 6000, 1},
        {3, 450800, 80, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        {3, 452000, 5500, SCN_EXPECT_SLAP, 200, 0.6, 1900, 4300, 1},
    };
    int lost = lost_with_two_pairs_known(400u, 600u, round, 2);
    CHECK(lost == 0, "a clipped slap 2 ms after a loud one, later than the pads' bound: lost at %d of 4 phases", lost);
}

/* Step 32 (since 2.27.0; seed 20261201, table_013's round at 700 ms):
 * pad 8's normal slap and, 0.23 ms later, pad 6's hard one each shake pad
 * 7 0.85 ms after them, pad 8's with 339 mV, pad 6's with 2.2 V. Pad 7's
 * first contact, pad 8's shake, is put down to pad 6 (the louder of the
 * two that began about as soon), so pad 6's own shake, arriving 0.23 ms
 * later, was "louder than the shake pad 6 already made" there (step 27)
 * and came out as a false slap at some phases of the samples. The shake
 * remembered is under 1/16 of pad 6's peak: too small to have been its.
 * No hit on pad 7 at any phase (-DDETECT_SHAKE_ONCE_RATIO=0: a false slap
 * at some). */
static void test_shake_once_from_its_own_source(void) {
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    const shaped_t ev[] = {
        {7, 50000, 1822, SCN_EXPECT_SLAP, 513, 0.48, 1545, 3481, 1},  /* pad 8's slap */
        {5, 50233, 12576, SCN_EXPECT_SLAP, 176, 0.47, 1186, 7183, 1}, /* pad 6's, 0.23 ms later, clipped */
        {6, 50849, 339, SCN_EXPECT_NONE, 176, 0.79, 1800, 2346, 1},   /* pad 8's shake on pad 7 */
        {6, 51082, 2213, SCN_EXPECT_NONE, 176, 0.80, 2103, 2236, -1}, /* pad 6's shake on pad 7 */
    };
    int phases, with = phases_with_a_hit_on(ev, 4, 150000u, 0.7, 6, &phases);
    CHECK(with == 0, "two slaps' shakes on pad 7, the quieter slap's first: a hit on pad 7 at %d of %d phases", with,
          phases);
    SCAN_PERIOD_US = keep;
}

/* Step 33 (since 2.27.0): a sharp 2 V half-wave that nothing explains (a
 * knock on the table by pad 2) is reported; 10 ms later, in its mask,
 * pad 2's player lands a 3 V slap, a hand's push 1.5 times as large: it
 * comes through (the mask's escape wants only as large after a sharp
 * report), at every phase of the samples (-DDETECT_MASK_AFTER_SHARP_X=2u:
 * masked at 18 of 19 when written, at 8 of 19 on 2.37.0). Through the
 * front end (gain 0.7). */
static void test_mask_after_a_sharp_report(void) {
    const shaped_t ev[] = {
        {1, 50000, 2000, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1}, /* the knock, reported */
        {1, 60000, 3000, SCN_EXPECT_SLAP, 600, 0.5, 1200, 5000, 1}, /* the player's slap in its mask */
    };
    check_found_at_every_phase(ev, 2, 150000u, 0.7, 1, -1.0, "a hand's push 1.5 times a sharp report, in its mask");
}

/* Step 29: once three pairs are known (pad 1's with pads 2, 3 and 4, at
 * 1.2, 1.3 and 1.4 ms, from three solo slaps of pad 1), no pair of the
 * table is taken to carry vibration in under 40 % of the shortest of them
 * (DETECT_FLOOR_PCT): a slap on pad 6 50 us after pad 5's loud one (a
 * pair not yet known, and no third pad knows both) is no shake of it,
 * found at every phase of the samples. With the floor off
 * (-DDETECT_FLOOR_PCT=0) it is dropped as pad 5's shake. */
static void test_delay_floor(void) {
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    shaped_t ev[16];
    int n = 0;
    for (uint32_t t = 50000; t < 350000; t += 100000) { /* pad 1 slapped alone, shaking pads 2, 3 and 4 */
        const shaped_t solo[] = {
            {0, t, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1},
            {1, t + 1200, 1500, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
            {2, t + 1300, 1400, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, -1},
            {3, t + 1400, 1300, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
        };
        for (int i = 0; i < 4; i++) ev[n++] = solo[i];
    }
    /* pad 5's clipped slap; 50 us later a quieter one on pad 6; pad 5's shake there at 0.9 ms */
    const shaped_t round[] = {
        {4, 350000, 12000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 6000, 1},
        {5, 350050, 2600, SCN_EXPECT_SLAP, 150, 0.5, 1300, 5000, 1},
        {5, 350900, 1700, SCN_EXPECT_NONE, 150, 0.8, 2300, 3500, 1},
    };
    const int quiet = n + 1; /* (pad 6's slap) */
    for (int i = 0; i < 3; i++) ev[n++] = round[i];
    const uint8_t known[][2] = {{0, 1}, {0, 2}, {0, 3}}, not_known[2] = {4, 5};
    int phases, unknown;
    int lost = slap_lost_with_pairs(ev, n, 450000u, quiet, known, 3, not_known, &unknown, &phases);
    CHECK(unknown == 0, "pad 1's pairs with pads 2, 3 and 4 learnt, pads 5-6 not, at every phase (not so at %d of %d)",
          unknown, phases);
    CHECK(lost == 0, "a slap 50 us after a loud one, sooner than the table's least delay: lost at %d of %d phases", lost,
          phases);
    SCAN_PERIOD_US = keep;
}

/* Run a scenario file, every contact shift_us later, through a fresh
 * detector as hostrun does (0: it did not load, counted as a failure). */
static int run_file(const char *path, uint32_t shift_us, scenario_t *s, hits_t *h) {
    scn_init(s);
    if (scn_load(s, path) != 0) {
        failures++;
        return 0;
    }
    for (int i = 0; i < s->nevents; i++) s->ev[i].t_us += shift_us;
    detect_t d;
    detect_init(&d, 8);
    run_as_hostrun(s, &d, h);
    return 1;
}

/* Every slap of s is found as a slap in h; returns how many slaps s has. */
static int check_every_slap_found(const scenario_t *s, const hits_t *h) {
    int slaps = 0;
    for (int i = 0; i < s->nevents; i++)
        if (s->ev[i].expect == SCN_EXPECT_SLAP) {
            int k = hit_near(h, s->ev[i].pad, s->ev[i].t_us);
            CHECK(k >= 0 && h->hit[k].is_slap, "pad %d's slap at %u us is found", s->ev[i].pad + 1, s->ev[i].t_us);
            slaps++;
        }
    return slaps;
}

/* A shake at the rails whose first half-wave is shorter than
 * CLIP_HAND_LOBE_US (260 us since 2.11.0) is a shake's, however much of
 * it was at the rails: sim/scenarios/short_clipped_shake.scn, a round of
 * the bench's table model where pad 3, still ringing from one shake, is
 * shaken up to the rails by pad 2's clipped slap (2.10.0, at 230 us,
 * reported it as a slap). The round's slaps are all found. */
static void test_short_clipped_shake(const char *path) {
    static scenario_t s;
    static hits_t h;
    if (!run_file(path, 0, &s, &h)) return;
    CHECK(hit_near(&h, 2, 255956.0) < 0, "pad 3's clipped shake at 255956 us is no hit");
    (void)check_every_slap_found(&s, &h);
}

/* The scenario file at path run at every 8 us of a 148 us scan (the
 * whole file shifted): pad0's slap at t_us (before the shift, `what` in
 * the messages) must be found as a slap at every phase, within 350 us of
 * its contact. 0 if the file would not load (a failure counted). */
static int check_slap_found_at_every_phase(const char *path, int pad0, double t_us, const char *what) {
    static scenario_t s;
    static hits_t h;
    int lost = 0, phases = 0;
    double worst = 0.0;
    for (uint32_t shift = 0; shift < 148u; shift += 8u, phases++) {
        if (!run_file(path, shift, &s, &h)) return 0;
        lost += !found_as_slap(&h, pad0, t_us + shift, &worst);
    }
    CHECK(lost == 0, "%s: lost at %d of %d phases", what, lost, phases);
    CHECK(fabs(worst) <= 350.0, "... and dated %+.0f us off its contact at worst", worst);
    return 1;
}

/* Step 30 (since 2.26.0): sim/scenarios/push_under_a_shake.scn, two rounds
 * of the bench's table model. At 276101 us pad 7's player lands a soft
 * slap 0.22 ms after pad 8's slap shook the pad: one contact with the
 * shake, whose push the low-passed deviation's level followed up. At every
 * phase of the samples (every 8 us) it is found, 0.19-0.33 ms late (with
 * -DLP_HOLD=0, as 2.25.0: lost at 10 of 19, found 0.36-0.43 ms late at the
 * others); at the file's own phase every slap of the file is found, and
 * nothing else. */
static void test_push_under_a_shake(const char *path) {
    static scenario_t s;
    static hits_t h;
    if (!check_slap_found_at_every_phase(path, 6, 276101.0, "pad 7's soft slap 0.22 ms into pad 8's shake (276101 us)"))
        return;
    if (!run_file(path, 0, &s, &h)) return;
    int slaps = check_every_slap_found(&s, &h);
    CHECK(h.n == slaps, "%d hits for the file's %d slaps", h.n, slaps);
}

/* Step 34: a slap one sample at the rails whose first half-wave is as
 * short as a shake's, among two louder slaps' shakes (a bench round:
 * push_sized_by_low_pass.scn), is a hand's push by its low-passed
 * deviation, and is found at every sample phase. */
static void test_push_sized_by_low_pass(const char *path) {
    (void)check_slap_found_at_every_phase(path, 3, 251987.0, "pad 4's slap 0.53 ms after pad 6's (251987 us)");
}

/* Eight slaps within a millisecond (120 us apart, 2.5-5.2 V), shaking one
 * another: more heavy steps than a scan allows. */
static void eight_slaps_within_a_ms(scenario_t *s) {
    scn_init(s);
    s->duration_us = 120000;
    for (int p = 0; p < 8; p++) scn_add_hit(s, p, 50000 + 120u * (uint32_t)p, 2500 + 900 * (p % 4), SCN_EXPECT_SLAP);
}

/* detect_work_taken() is told of every unit of heavy work before it runs
 * (the image paces its sampler there, since 2.15.0), and only of those
 * (detect_work_goes_on() of the looks for a source as they go on):
 * eight slaps within a millisecond, shaking one another, take more heavy
 * steps than a scan allows, and the calls equal the units taken. */
static void test_work_taken_is_told(void) {
    static scenario_t s;
    static hits_t h;
    eight_slaps_within_a_ms(&s);
    detect_t d;
    detect_init(&d, 8);
    d.work = DETECT_WORK_PER_SCAN; /* (detect_init's is unlimited, uncounted) */
    work_units_taken = work_hook_calls = work_goes_on_calls = 0;
    run_as_hostrun(&s, &d, &h);
    CHECK(work_units_taken >= 16, "eight slaps: at least a start and a decision each (%u units)", work_units_taken);
    CHECK(work_hook_calls == work_units_taken, "detect_work_taken: %u calls for %u units of heavy work", work_hook_calls,
          work_units_taken);
    CHECK(h.n == 8, "the eight slaps are found (%d hits)", h.n);
    /* and a look for a shake's source tells it as it goes on (since 2.16.0):
     * a slap shaking three neighbours */
    scn_init(&s);
    s.duration_us = 120000;
    add_shaped(&s, 0, 50000, 9000, SCN_EXPECT_SLAP, 150, 0.5, 1900, 3000, 1);
    for (int p = 1; p < 4; p++) add_shaped(&s, p, 50300 + 60u * (uint32_t)p, 1500, SCN_EXPECT_NONE, 100, 0.6, 2800, 3000, 1);
    detect_init(&d, 8);
    d.work = DETECT_WORK_PER_SCAN;
    work_goes_on_calls = 0;
    run_as_hostrun(&s, &d, &h);
    CHECK(h.n == 1 && h.hit[0].pad == 0, "a slap and three shakes: one hit, pad 1's (%d hits)", h.n);
    CHECK(work_goes_on_calls >= 3, "detect_work_goes_on: %u calls in three looks for a source", work_goes_on_calls);
}

static int hit_by_onset(const void *a, const void *b) {
    const detect_hit_t *x = a, *y = b;
    if (x->onset_us != y->onset_us) return x->onset_us < y->onset_us ? -1 : 1;
    return (int)x->pad - (int)y->pad;
}

/* The image holds a unit of heavy work back near its FIFO's end
 * (detect_work_taken() returns 0, since 2.34.0): the scan then takes no
 * more, and what asked tries again at its pad's next sample. Eight slaps
 * within a millisecond, with every third to every seventh unit asked held
 * back, are found at the onsets every unit taken gives, in another order
 * (a hit goes out as it is decided): the walk back finds the same start
 * of the rise a scan later. (Every second unit held back dates two of
 * them 37 and 120 us late: a start put off scan after scan loses its
 * rise's start from the history. The image holds units only until the
 * brake it asked for comes in, a scan or two each time: on the bench's
 * files 2.5 units in a run that holds any, 16 at most.) */
static void test_work_held_back(void) {
    static scenario_t s;
    static hits_t all, held;
    eight_slaps_within_a_ms(&s);
    detect_t d;
    detect_init(&d, 8);
    d.work = DETECT_WORK_PER_SCAN;
    work_hold_every = 0;
    run_as_hostrun(&s, &d, &all);
    CHECK(all.n == 8, "every unit taken: the eight slaps are found (%d hits)", all.n);
    qsort(all.hit, (size_t)all.n, sizeof all.hit[0], hit_by_onset);
    for (unsigned every = 3; every <= 7; every++) {
        detect_init(&d, 8);
        d.work = DETECT_WORK_PER_SCAN;
        work_hook_calls = work_holds = 0;
        work_hold_every = every;
        run_as_hostrun(&s, &d, &held);
        work_hold_every = 0;
        qsort(held.hit, (size_t)held.n, sizeof held.hit[0], hit_by_onset);
        CHECK(work_holds > 0, "every %u: units held back (%u of %u asked)", every, work_holds, work_hook_calls);
        CHECK(held.n == all.n, "every %u held back: %d hits, %d with every unit taken", every, held.n, all.n);
        for (int i = 0; i < held.n && i < all.n; i++)
            CHECK(held.hit[i].pad == all.hit[i].pad && held.hit[i].onset_us == all.hit[i].onset_us &&
                      held.hit[i].is_slap == all.hit[i].is_slap && held.hit[i].peak == all.hit[i].peak,
                  "every %u held back: hit %d pad %u at %lu us, with every unit taken pad %u at %lu us", every, i,
                  held.hit[i].pad + 1u, (unsigned long)held.hit[i].onset_us, all.hit[i].pad + 1u,
                  (unsigned long)all.hit[i].onset_us);
    }
}

/* A loud slap's shake is no larger on a pad it reaches later than on one
 * it reached sooner: a hard slap at the rails on a far pad, a millisecond
 * after a neighbour's long clipped slap (clipped longer, so it looks like
 * that slap's shake), is found once that slap's shake on a nearer pad was
 * small. Without the nearer pad's shake (nothing to tell it by) the same
 * slap was dropped until 2.22.0: what made the rule worth having. Since
 * 2.22.0 (DETECT_XT_CLIPPED_LOBE_US 320 us, 400 before) it is found then
 * too: at the rails for over 230 us, its first half-wave (~370 us) is
 * longer than a shake's there can be. Unless it rings
 * loud enough to stay at the rails longer than the other slap's scan did
 * (a shake is a fraction of its slap: it cannot): then it is found with
 * no nearer shake at all, and that is the rails rule's worth. And a
 * quieter far slap off the rails, 1.35 V, under twice the nearer shake's
 * 0.68 V (plus the threshold) but over 1.5 times it, is found since
 * 2.11.0 (DETECT_XT_NEARER_X10 15: 2.10.0's margin of two dropped it). */
static void test_nearer_shake_smaller(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    /* 0: no nearer shake, the far slap rings faintly (off the rails); 1: the
     * nearer shake; 2: no nearer shake, the far slap rings at the rails;
     * 3: the nearer shake, the far slap quieter (1.35 V, off the rails) */
    for (int variant = 0; variant < 4; variant++) {
        int nearer = variant == 1 || variant == 3;
        scn_init(&s);
        s.duration_us = 60000;
        s.noise_mv = 5;
        /* pad 4: a long clipped slap; its shakes: pad 5 after 746 us (small), pad 1 after 2117 us (tiny) */
        add_shaped(&s, 3, 30000, 3600, SCN_EXPECT_SLAP, 392, 0.7, 1023, 7500, -1);
        if (nearer) add_shaped(&s, 4, 30746, 680, SCN_EXPECT_NONE, 189, 1.0, 1960, 2400, 1);
        add_shaped(&s, 0, 32117, 125, SCN_EXPECT_NONE, 150, 0.7, 2000, 2400, -1);
        /* pad 1: a sharp slap 1 ms later, at the rails for a shorter time,
         * ringing at a tenth of its peak (1.5 V: off them) or at 0.36 (5 V) */
        add_shaped(&s, 0, 31007, variant == 3 ? 1350 : 14600, SCN_EXPECT_SLAP, 186, variant == 2 ? 0.36 : 0.1, 1388, 7400, -1);
        add_shaped(&s, 3, 33124, 510, SCN_EXPECT_NONE, 150, 0.75, 1776, 2600, -1);
        add_shaped(&s, 4, 33417, 320, SCN_EXPECT_NONE, 160, 0.75, 2020, 2700, -1);
        detect_t d;
        detect_init(&d, 8);
        run(&s, &d, 0, &h);
        int k = hit_near(&h, 0, 31007.0);
        if (variant == 1)
            CHECK(k >= 0 && h.hit[k].is_slap, "the far slap at the rails is found: its source's shake on a nearer pad was small");
        else if (variant == 2)
            CHECK(k >= 0 && h.hit[k].is_slap, "the far slap ringing at the rails is found: longer there than its source's scan");
        else if (variant == 3)
            CHECK(k >= 0 && h.hit[k].is_slap, "the quieter far slap, over 1.5 times the nearer shake, is found");
        else
            CHECK(k >= 0 && h.hit[k].is_slap,
                  "without the nearer pad's shake, the far slap is found: its first half-wave at the rails is a hand's");
        CHECK(hit_near(&h, 3, 30000.0) >= 0, "the long clipped slap is found (%d)", variant);
    }
    SCAN_PERIOD_US = keep;
}

/* ev (n contacts, shifted) in 150 ms of a quiet table with 5 mV of noise,
 * every pad's front end of gain `gain` (scenario.h's gain line: 1, the
 * waveforms at the pin; 0.7, through docs/wiring.md's capacitor across the
 * disc) and a crosstalk setting of xtalk % on every pad. */
static void run_shaped_through(scenario_t *s, const shaped_t *ev, int n, uint32_t shift, double gain, uint8_t xtalk,
                               hits_t *h) {
    quiet_table(s, 5);
    for (int k = 0; k < SCN_PADS; k++) s->gain[k] = gain;
    add_all_shaped(s, ev, n, shift);
    detect_t d;
    detect_init(&d, 8);
    for (int p = 0; p < 8; p++) d.pad[p].xtalk = xtalk;
    detect_settings_changed(&d);
    run(s, &d, 0, h);
}

/* Step 26: a bench round (seed 20261201, table_168, round 940): a quiet
 * first slapper's soft slap on pad 8 (1.35 V at the disc, a 696 us rise)
 * has peaked and turned when pad 1's hard slap, 0.54 ms after it, shakes
 * pad 8 with 3.4 V. The first half-wave rose to the slap threshold more
 * slowly than a shake's does, so it was the hand's: its contact goes on,
 * the shake landing on it is no new one. Found, at its own onset, at
 * every phase of the samples (2.22.0, which started afresh at the shake
 * and dropped that as pad 1's shake: -DDETECT_SLOW_RISE_KEEPS=0, lost at
 * 10 of 19; on 2.37.0 that build finds it but dates it at the shake, 1.2
 * ms late). Through 2.22.0's front end (gain 0.7). */
static void test_slow_hand_under_a_shake(void) {
    const shaped_t ev[] = {
        {7, 50000, 1354, SCN_EXPECT_SLAP, 696, 0.44, 1785, 4934, 1},   /* the quiet first slapper */
        {0, 50540, 10523, SCN_EXPECT_SLAP, 210, 0.37, 1311, 7190, 1},  /* the hard slap after it */
        {0, 50626, 432, SCN_EXPECT_NONE, 120, 0.78, 2606, 3623, 1},    /* the soft slap's shake on pad 1 */
        {7, 51166, 3357, SCN_EXPECT_NONE, 179, 0.83, 2592, 3661, 1},   /* the hard slap's on pad 8 */
    };
    check_found_at_every_phase(ev, 4, 150000u, 0.7, 0, 150.0, "a soft slap a neighbour's shake lands on after it turned");
    check_found_at_every_phase(ev, 4, 150000u, 0.7, 1, -1.0, "the hard slap after it");
}

/* Step 27: a bench round (seed 20261201, table_061): pad 5's 9.2 V slap
 * shakes pad 6 (1.6 V, dropped as its shake), and 2.6 ms later, on that
 * pad still ringing, its player's own 2 V slap. Pad 5's contact shook pad
 * 6 once: the slap, over half that shake above the ringing it rose out
 * of, is no second shake of it. Found at every phase of the samples,
 * within 150 us of its contact (2.22.0's rule, a contact an eighth louder
 * than the shake: -DDETECT_SHAKE_ONCE=0, lost at 10 of 19). Through
 * 2.22.0's front end (gain 0.7). */
static void test_a_slap_shakes_a_pad_once(void) {
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    const shaped_t ev[] = {
        {4, 50000, 9229, SCN_EXPECT_SLAP, 232, 0.66, 813, 7823, 1},   /* the neighbour's hard slap */
        {5, 50375, 1615, SCN_EXPECT_NONE, 110, 0.83, 2305, 3371, -1}, /* its shake on pad 6 */
        {5, 52956, 2018, SCN_EXPECT_SLAP, 314, 0.46, 1589, 6223, 1},  /* the player's own slap */
    };
    double worst;
    int phases, shakes;
    int lost = slap_lost_at_phases(ev, 3, 150000u, 0.7, 2, &worst, &phases, &shakes);
    CHECK(lost == 0, "a slap on a pad a neighbour's slap shook 2.6 ms before: lost at %d of %d phases", lost, phases);
    CHECK(fabs(worst) <= 150.0, "... and dated %+.0f us off its contact at worst", worst);
    CHECK(shakes == 0, "... and the shake before it reported at %d of %d phases", shakes, phases);
    SCAN_PERIOD_US = keep;
}

/* Step 28: a bench round (seed 5, table_103): pad 5's 9.3 V slap and,
 * 0.44 ms later, pad 6's 8.3 V slap (both at the rails) shake pad 7 with
 * 1.3 and 1.7 V, 0.2 ms apart and the same way: one first half-wave longer
 * than a shake's, so it was taken for a hand's push (a false slap at 16 of
 * 19 phases with -DDETECT_OVERLAP_X10=0). Far quieter than the contacts
 * just before it, it is judged as a shake may be, and is theirs. Both slaps
 * are still found. Through the front end (gain 0.7). */
static void test_overlapping_shakes(void) {
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    const shaped_t ev[] = {
        {4, 50000, 9266, SCN_EXPECT_SLAP, 318, 0.46, 864, 5800, -1},  /* pad 5's slap, at the rails */
        {3, 50320, 1909, SCN_EXPECT_NONE, 177, 0.74, 2456, 4000, -1},  /* pad 5's shake */
        {5, 50320, 1955, SCN_EXPECT_NONE, 126, 0.94, 2618, 3738, -1},  /* pad 5's shake */
        {5, 50441, 8328, SCN_EXPECT_SLAP, 185, 0.53, 1583, 7909, 1},  /* pad 6's, at the rails */
        {2, 50585, 1251, SCN_EXPECT_NONE, 181, 0.95, 2534, 4000, 1},  /* pad 5's shake */
        {6, 50585, 1288, SCN_EXPECT_NONE, 142, 0.97, 2366, 4000, -1},  /* pad 5's shake on pad 7 ... */
        {4, 50761, 1757, SCN_EXPECT_NONE, 138, 0.79, 2232, 4000, 1},  /* pad 6's shake */
        {6, 50790, 1699, SCN_EXPECT_NONE, 170, 0.92, 2533, 3930, -1},  /* ... and pad 6's, 0.2 ms later */
        {1, 50908, 593, SCN_EXPECT_NONE, 173, 0.98, 2215, 4000, -1},  /* pad 5's shake */
        {7, 50908, 630, SCN_EXPECT_NONE, 103, 0.76, 2213, 3941, 1},  /* pad 5's shake */
        {3, 50986, 983, SCN_EXPECT_NONE, 174, 0.93, 2616, 3622, 1},  /* pad 6's shake */
        {0, 51034, 445, SCN_EXPECT_NONE, 174, 0.64, 2595, 3830, -1},  /* pad 5's shake */
        {2, 51088, 899, SCN_EXPECT_NONE, 117, 0.94, 2200, 4000, 1},  /* pad 6's shake */
        {7, 51140, 783, SCN_EXPECT_NONE, 159, 0.83, 2623, 3806, -1},  /* pad 6's shake */
        {1, 51327, 508, SCN_EXPECT_NONE, 173, 0.70, 2355, 3588, 1},  /* pad 6's shake */
        {0, 51349, 475, SCN_EXPECT_NONE, 200, 0.71, 2262, 3561, -1},  /* pad 6's shake */
    };
    const int n = (int)(sizeof ev / sizeof ev[0]);
    int phases;
    int false_hits = phases_with_a_hit_on(ev, n, 150000u, 0.7, 6, &phases);
    CHECK(false_hits == 0, "two shakes overlapping into one first half-wave: a hit on the shaken pad at %d of %d phases",
          false_hits, phases);
    double worst;
    int lost = slap_lost_at_phases(ev, n, 150000u, 0.7, 0, &worst, &phases, NULL);
    CHECK(lost == 0, "... and pad 5's slap lost at %d of %d phases", lost, phases);
    /* (pad 6's slap lands 0.12 ms after pad 5's shake on its own pad: lost
     * at 2 of the 19 phases with or without step 28, as 2.23.0 does) */
    lost = slap_lost_at_phases(ev, n, 150000u, 0.7, 3, &worst, &phases, NULL);
    CHECK(lost <= 2, "... and pad 6's slap lost at %d of %d phases", lost, phases);
    SCAN_PERIOD_US = keep;
}

/* A slap that barely clipped, with a long first half-wave (~3.2 V at the
 * pin: under half of it at the rails), shakes no pad up to the rails at a
 * crosstalk of 50 % (2.21.0's default): a slap at the rails on a neighbour
 * 0.3-0.4 ms later is a slap, whatever the sample phase. (At 2.22.0's 70 %
 * the share of its first half-wave a source must spend at the rails to
 * shake a pad there falls to 48 %, and counted generously, a sample gap
 * more, this source's 43 % is not told apart: the second slap is dropped at
 * 4 of the 6 phases. The same hands through 2.22.0's front end, 2.2 V at
 * the pin, do not clip at all, and both are found at the defaults: a hand
 * must now be ~4.6 V at the disc to clip.) A slap far past the rails (12 V:
 * nearly all its first half-wave there) does shake its near neighbour to
 * the rails, and that shake stays out. */
static void test_barely_clipped_source(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    static const uint32_t lead[] = {300, 400};
    for (unsigned i = 0; i < 2; i++) {
        const shaped_t ev[] = {
            {0, 30000, 3200, SCN_EXPECT_SLAP, 500, 0.5, 1200, 4000, 1},
            {1, 30500, 900, SCN_EXPECT_NONE, 150, 0.8, 2200, 3000, 1}, /* its shake */
            {1, 30000 + lead[i], 3100, SCN_EXPECT_SLAP, 180, 0.5, 1500, 4000, 1},
            {0, 30500 + lead[i], 870, SCN_EXPECT_NONE, 150, 0.8, 2200, 3000, 1},
        };
        for (uint32_t shift = 37u; shift < 148u; shift += 37u) {
            run_shaped_through(&s, ev, 4, shift, 1.0, 50u, &h);
            CHECK(hit_near(&h, 0, s.ev[0].t_us) >= 0 && hit_near(&h, 1, s.ev[2].t_us) >= 0,
                  "crosstalk 50 %%: both slaps at the rails found, %u us apart (shift %u us): got %d hits",
                  (unsigned)lead[i], shift, h.n);
            run_shaped_through(&s, ev, 4, shift, 0.7, DETECT_DEFAULT_XTALK, &h);
            CHECK(h.n == 2 && hit_near(&h, 0, s.ev[0].t_us) >= 0 && hit_near(&h, 1, s.ev[2].t_us) >= 0,
                  "through the capacitor across the disc, at the defaults: both slaps found, %u us apart (shift %u us): "
                  "got %d hits", (unsigned)lead[i], shift, h.n);
        }
    }
    /* (Through the capacitor across the disc, 8.4 and 3.4 V at the pin, the
     * shake stays out at every phase. At the pin itself, a 17 V slap at the
     * disc, its shake's first half-wave (~380 us) is measured over 2.22.0's
     * DETECT_XT_CLIPPED_LOBE_US of 320 at some phases, and it comes out as
     * a slap: at 1 of these 3 phases, 5 of 19 at every 8 us (1 of 19 with
     * 2.21.0's 400). A known cost, rarer than the slaps the limit finds.
     * Since 2.28.0 also at a third phase: there the shake's first
     * half-wave, 481 us and one sample at the rails, carries 229 counts
     * through the low-passed deviation, a hand's push by step 34's
     * measure (220 for a contact at the rails); through the front end it
     * stays out at every phase, above.) */
    const shaped_t hard[] = {
        {0, 30000, 12000, SCN_EXPECT_SLAP, 330, 0.6, 1700, 4800, 1},
        {1, 30570, 4800, SCN_EXPECT_NONE, 190, 0.6, 2200, 2800, 1}, /* 40 %: at the rails */
    };
    int out_at_pin = 0;
    for (uint32_t shift = 37u; shift < 148u; shift += 37u) {
        run_shaped_through(&s, hard, 2, shift, 0.7, DETECT_DEFAULT_XTALK, &h);
        CHECK(h.n == 1 && hit_near(&h, 0, s.ev[0].t_us) >= 0,
              "a slap far past the rails, through the front end: its shake at the rails stays out (shift %u us), got %d hits",
              shift, h.n);
        run_shaped(&s, hard, 2, shift, 5, &h);
        CHECK(hit_near(&h, 0, s.ev[0].t_us) >= 0, "a slap far past the rails is found (shift %u us)", shift);
        out_at_pin += h.n == 1;
    }
    CHECK(out_at_pin >= 1, "a slap far past the rails at the pin: its shake stays out at %d of 3 phases (known: 1)", out_at_pin);
    SCAN_PERIOD_US = keep;
}

/* A slap taken for a shake while both it and the slap before it were at
 * the rails (their sizes only estimates) may have been a player's: its own
 * shakes on the pads next to it, larger than the first slap's there, are
 * not false slaps (step 12). A bench round, as the table model made it
 * (seed 20261201, table_142 round 786): a 7.8 V slap on pad 6, a 10.8 V
 * one on pad 3 1 ms later, each shaking all seven other pads. At some
 * sample phases the second slap is taken for the first one's shake (both
 * at the rails for two samples); its shakes on pads 2 and 4 (2.4 and 2.2
 * V, three times the first slap's there) then came out as slaps: 2.6.0's
 * detection, at its share margin or at 2.7.0's, makes two at each phase it
 * drops the second slap (37 and 74 us). That this detection still drops it
 * there is what the test relies on, not what it asks for. */
static void test_shake_of_a_doubted_slap(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const shaped_t ev[] = {
        {5, 276680, 7791, SCN_EXPECT_SLAP, 195, 0.65, 1637, 7622, -1},
        {2, 277718, 10753, SCN_EXPECT_SLAP, 157, 0.35, 1915, 3718, 1},
        /* the first slap's shakes */
        {4, 277038, 1449, SCN_EXPECT_NONE, 154, 0.74, 2602, 4000, -1},
        {6, 277071, 1496, SCN_EXPECT_NONE, 194, 0.63, 2639, 4000, 1},
        {3, 277289, 927, SCN_EXPECT_NONE, 122, 0.97, 2562, 3609, 1},
        {2, 277404, 826, SCN_EXPECT_NONE, 141, 0.78, 2908, 4000, 1},
        {7, 277461, 717, SCN_EXPECT_NONE, 165, 0.99, 3000, 3759, 1},
        {1, 277671, 499, SCN_EXPECT_NONE, 146, 0.89, 2684, 4000, -1},
        {0, 277696, 483, SCN_EXPECT_NONE, 119, 0.63, 2948, 3583, -1},
        /* the second's */
        {1, 278109, 2419, SCN_EXPECT_NONE, 174, 0.97, 2976, 4000, 1},
        {3, 278109, 2237, SCN_EXPECT_NONE, 166, 0.91, 3000, 4000, 1},
        {6, 278327, 1624, SCN_EXPECT_NONE, 174, 0.62, 2556, 4000, 1},
        {0, 278372, 1516, SCN_EXPECT_NONE, 116, 0.63, 2726, 3843, 1},
        {4, 278372, 1366, SCN_EXPECT_NONE, 129, 0.63, 3000, 3584, -1},
        {5, 278442, 1140, SCN_EXPECT_NONE, 119, 0.86, 2873, 3560, 1},
        {7, 278442, 1290, SCN_EXPECT_NONE, 101, 0.67, 2697, 4000, -1},
    };
    int doubted = 0; /* (phases at which the second slap was taken for a shake) */
    for (uint32_t shift = 0; shift < 148u; shift += 37u) { /* (the sample phase) */
        scn_init(&s);
        s.duration_us = 300000;
        s.seed = 517603870u;
        s.noise_mv = 10;
        s.hum_mv = 44;
        s.hum_hz = 50;
        s.drift_mv = 88;
        s.drift_period_us = 6684229;
        s.bias_mv = 2508;
        run_shaped_in(&s, ev, 16, shift, &h);
        CHECK(hit_near(&h, 5, s.ev[0].t_us) >= 0, "the first slap found (shift %u us)", shift);
        if (hit_near(&h, 2, s.ev[1].t_us) >= 0) continue; /* (found: not the case this is about) */
        doubted++;
        int shaken = 0;
        for (int k = 0; k < h.n; k++)
            if (h.hit[k].pad != 5) shaken++;
        CHECK(shaken == 0, "the second slap taken for a shake, its shakes no slaps (shift %u us): %d hits on shaken pads",
              shift, shaken);
    }
    CHECK(doubted > 0, "the second slap was taken for a shake at some phase (else this tests nothing)");
    SCAN_PERIOD_US = keep;
}

/* Step 35 (since 2.32.0): the crosstalk ratio's default is 55 %. A soft
 * slap (1.3 V) 2.6 ms after a neighbour's slightly louder one (2 V),
 * whose faint shake reached its pad 1.1 ms before it, is found at every
 * phase of the samples; at 70 %, the default from 2.22.0 to 2.31.0, its
 * sharp first half-wave at 65 % of the louder peak fitted as that slap's
 * shake, and it was lost. A contact shaped as a shake at 45 % of it is
 * still dropped at every phase. Returns at how many of the 19 phases pad
 * 6's contact came out as a slap. */
static int quiet_slap_after_a_louder_one(uint8_t xtalk, double share, int shake) {
    static scenario_t s;
    static hits_t h;
    int found = 0;
    for (uint32_t shift = 0; shift < 148u; shift += 8u) {
        scn_init(&s);
        s.duration_us = 80000;
        s.noise_mv = 5;
        add_shaped(&s, 0, 40000u + shift, 2000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 5000, 1);
        add_shaped(&s, 5, 41500u + shift, 60, SCN_EXPECT_NONE, 150, 0.6, 2300, 3000, 1);
        if (shake) add_shaped(&s, 5, 42600u + shift, 2000 * share, SCN_EXPECT_NONE, 150, 0.6, 2300, 3000, 1);
        else add_shaped(&s, 5, 42600u + shift, 2000 * share, SCN_EXPECT_SLAP, 200, 0.5, 1200, 5000, 1);
        detect_t d;
        detect_init(&d, 8);
        for (int p = 0; p < 8; p++) d.pad[p].xtalk = xtalk;
        detect_settings_changed(&d);
        run_as_hostrun(&s, &d, &h);
        CHECK(found_as_slap(&h, 0, 40000.0 + shift, NULL), "pad 1's 2 V slap is found (shift %u us)", shift);
        found += found_as_slap(&h, 5, 42600.0 + shift, NULL);
    }
    return found;
}

static void test_quiet_slap_after_a_louder_one(void) {
    int at_default = quiet_slap_after_a_louder_one(DETECT_DEFAULT_XTALK, 0.65, 0);
    CHECK(at_default == 19, "a 1.3 V slap 2.6 ms after a 2 V one: found at %d of 19 phases", at_default);
    int at_70 = quiet_slap_after_a_louder_one(70u, 0.65, 0);
    CHECK(at_70 < 19, "... and lost at some phases with xtalk 70 %% (found at %d of 19)", at_70);
    int shake = quiet_slap_after_a_louder_one(DETECT_DEFAULT_XTALK, 0.45, 1);
    CHECK(shake == 0, "a sharp shake at 45 %% of it is dropped at every phase (reported at %d of 19)", shake);
}

/* Step 13: a table whose shakes come slowly (a soft top: a first
 * half-wave of ~0.7 ms, longer than DETECT_XT_LOBE_US) teaches the box
 * what its shakes look like. A hard slap on pad 1, its slow shake on pad 2
 * big enough for a slap: on a fresh box, not sharp, so a hand's: a false
 * slap. After a few rounds of the same table's smaller shakes (learnt from
 * by size and time alone), the same shake is dropped. On the model's
 * table (shakes rising in ~120 us) the limit stays DETECT_XT_LOBE_US. */
static void test_shake_lobe_learnt(void) {
    static scenario_t s;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    static hits_t h;
    const uint32_t last = 500000u; /* the round judged */
    for (int slow = 0; slow < 2; slow++) {
        double rise = slow ? 350.0 : 120.0, hz = slow ? 900.0 : 2300.0;
        for (int learn = 0; learn < 2; learn++) {
            scn_init(&s);
            s.duration_us = 600000;
            s.noise_mv = 5;
            if (learn)
                for (uint32_t t = 40000u; t < last; t += 60000u) {
                    add_shaped(&s, 0, t, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1);
                    add_shaped(&s, 1, t + 600u, 550, SCN_EXPECT_NONE, rise, 0.5, hz, 3000, 1);
                    add_shaped(&s, 2, t + 900u, 450, SCN_EXPECT_NONE, rise, 0.5, hz, 3000, -1);
                }
            add_shaped(&s, 0, last, 9000, SCN_EXPECT_SLAP, 250, 0.5, 1200, 5000, 1);
            add_shaped(&s, 1, last + 600u, 1400, SCN_EXPECT_NONE, rise, 0.5, hz, 3000, 1);
            detect_t d;
            detect_init(&d, 8);
            run(&s, &d, 0, &h);
            unsigned lobe = d.shake_lobe8 * 8u;
            int k = hit_near(&h, 1, last + 600.0);
            if (!slow) {
                CHECK(detect_sharp_us(&d) == DETECT_XT_LOBE_US, "fast shakes (learnt %d): learnt %u us, the limit %u us stays %u us",
                      learn, lobe, detect_sharp_us(&d), DETECT_XT_LOBE_US);
                CHECK(k < 0, "a fast shake is dropped with or without learning (learnt %d)", learn);
            } else if (learn) {
                /* (16 shakes at 16 us a step: still on its way to their ~0.6 ms, the limit well past 480 us already) */
                CHECK(detect_sharp_us(&d) >= 800u && lobe <= 900u,
                      "slow shakes: their first half-wave learnt as %u us (~600), sharp within %u us", lobe,
                      detect_sharp_us(&d));
                CHECK(k < 0, "after the learning, the slow shake is dropped");
                CHECK(h.n == 9, "the nine slaps on pad 1 and nothing else, got %d hits", h.n);
            } else {
                CHECK(lobe <= DETECT_SHAKE_LOBE_START_US + DETECT_SHAKE_LOBE_STEP_US,
                      "one shake moves a fresh box's lobe a step at most (%u)", lobe);
                /* (what makes the rule worth having: this means nothing if the slow shake is dropped anyway) */
                CHECK(k >= 0, "on a fresh box, the slow shake is taken for a slap");
            }
        }
    }
    SCAN_PERIOD_US = keep;
}

/* Step 16: the ringing's level (what a new contact on a ringing pad must
 * pass) decays in time, not in samples. A slap rings on its pad; 9 ms
 * after it its level is the same within a third at 148 us a scan (the
 * quiet table's) and at 296 us (the sampler paced in a burst), at every
 * phase of the samples. With the quiet scan's decay a tick at both
 * (detect_slow 0), it is half as large again at 296 us: a shaken pad's
 * slap a few ms later was lost so on the image's samples (seed 20261201,
 * table_026, pad 5). */
static double ring_level_after(unsigned period_us, uint32_t shift, int slow) {
    static scenario_t s;
    static hits_t h;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = period_us;
    slow_override = slow;
    scn_init(&s);
    s.noise_mv = 6;
    add_shaped(&s, 0, 60000 + shift, 2000, SCN_EXPECT_SLAP, 600, 0.4, 1200, 5000, 1);
    s.duration_us = 69000 + shift; /* (the run stops 9 ms after the contact) */
    detect_t d;
    detect_init(&d, 8);
    d.pad[0].mask_us = 0; /* (no mask: its pad followed at every sample, not every other scan: step 19) */
    detect_settings_changed(&d);
    run(&s, &d, 0, &h);
    CHECK(h.n == 1 && h.hit[0].is_slap && d.st[0].state == DETECT_RING,
          "the slap is found and its pad rings (%u us a scan, shift %u us): %d hit(s), state %u", period_us, shift, h.n,
          d.st[0].state);
    slow_override = -1;
    SCAN_PERIOD_US = keep;
    return (double)d.st[0].ref;
}

static void test_ring_level_decays_in_time(void) {
    double worst_old = 0.0;
    for (uint32_t shift = 0; shift < 148u; shift += 37u) {
        double quiet = ring_level_after(148u, shift, -1), paced = ring_level_after(296u, shift, -1);
        CHECK(quiet > 0.0 && paced >= 0.75 * quiet && paced <= 1.33 * quiet,
              "the ringing's level 9 ms on: %.0f at 296 us a scan, %.0f at 148 us (shift %u us)", paced, quiet, shift);
        double old = ring_level_after(296u, shift, 0);
        if (quiet > 0.0 && old / quiet > worst_old) worst_old = old / quiet;
    }
    CHECK(worst_old > 1.33, "(the test means something: decayed a tick at a time, %.2f times as large at 296 us)", worst_old);
}

/* Step 19: a pad that reported a contact is followed every other scan
 * while it rings in its mask (its ringing's ticks come half as often), and
 * at every sample again once the mask is over; a sample left out still
 * goes into its history. */
static void test_reported_pad_every_other_scan(void) {
    static scenario_t s;
    static hits_t h;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    uint8_t lobe_ticks[2] = {0, 0};
    for (int m = 0; m < 2; m++) {
        scn_init(&s);
        s.noise_mv = 6;
        add_shaped(&s, 0, 60000, 2000, SCN_EXPECT_SLAP, 400, 0.5, 1200, 8000, 1);
        s.duration_us = 72000; /* (12 ms after the contact: within the mask) */
        detect_t d;
        detect_init(&d, 8);
        if (!m) {
            d.pad[0].mask_us = 0;
            detect_settings_changed(&d);
        }
        run(&s, &d, 0, &h);
        const detect_pad_state_t *st = &d.st[0];
        CHECK(h.n == 1 && st->state == DETECT_RING, "the slap is reported and rings (mask %s): %d hit(s), state %u",
              m ? "on" : "off", h.n, st->state);
        lobe_ticks[m] = st->since_lobe;
        /* (the history holds every sample all the same: the newest two one scan apart) */
        uint8_t at = st->hist_at;
        uint16_t gap = (uint16_t)(st->hist[(at - 1u) & 7u].t - st->hist[(at - 2u) & 7u].t);
        CHECK(gap == 148u, "the history is a sample a scan (mask %s): %u us between its newest two", m ? "on" : "off",
              gap);
        if (m) {
            uint32_t t = 71000u + 7u;
            CHECK(detect_skips(&d, st, t) == (d.scan & 1u), "in the mask, the odd scans' samples are left out");
            CHECK(!detect_skips(&d, st, st->mask_end_us), "from the mask's end on, none is");
        }
    }
    /* (since_lobe counts the samples followed since the first half-wave ended, RING_TICK a tick) */
    CHECK(lobe_ticks[0] > 60u && lobe_ticks[1] * 2u >= lobe_ticks[0] - 8u && lobe_ticks[1] * 2u <= lobe_ticks[0] + 8u,
          "in its mask the pad is followed half as often: %u samples since its first half-wave, %u without a mask",
          lobe_ticks[1], lobe_ticks[0]);
    SCAN_PERIOD_US = keep;
}

/* Step 17: a neighbour's hard slap shakes a pad far past the rails; its
 * contact's peak is estimated (over 600 counts), but no sample of that pad
 * can show more than the rails let through (~512 from its rest), and the
 * ringing's level, which a new contact must pass, starts no higher: at the
 * estimated peak it kept out every contact on that pad, the player's own
 * slap included, until it had decayed to the rails (~5 ms after a hard
 * shake). Checked as soon as the shake's first half-wave is over, at every
 * phase of the samples (148 us a scan); without step 17 the level was
 * 706-1104 counts there, where a sample can show 512-526. */
static void test_ring_level_within_the_rails(void) {
    static scenario_t s;
    static hits_t h;
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    for (uint32_t shift = 0; shift < 148u; shift += 37u) {
        scn_init(&s);
        s.noise_mv = 8;
        add_shaped(&s, 0, 50000 + shift, 14000, SCN_EXPECT_SLAP, 200, 0.5, 1200, 5000, 1);
        add_shaped(&s, 1, 50500 + shift, 8000, SCN_EXPECT_NONE, 150, 0.8, 2200, 3000, 1);
        s.duration_us = 51400 + shift; /* (the shake's first half-wave over, its scan not) */
        detect_t d;
        detect_init(&d, 8);
        run(&s, &d, 0, &h);
        const detect_pad_state_t *st = &d.st[1];
        unsigned low = detect_level(&d, 1, 0), high = detect_level(&d, 1, 1023), most = low > high ? low : high;
        CHECK(st->state == DETECT_SCAN && (st->c.flags & DETECT_C_LOBE), "the shake's first half-wave is over (shift %u us)",
              shift);
        /* (a few counts more: the rest has moved on since, and the crests are measured from where it was) */
        CHECK(st->ref <= most + 8, "the ringing's level %u, what a sample can show %u (shift %u us)", st->ref, most, shift);
    }
    SCAN_PERIOD_US = keep;
}

static void test_poll_buffer_small(void) {
    /* Three simultaneous equal slaps, a buffer of two: two come out, the
     * third is dropped whole rather than garbled, and nothing crashes. */
    detect_t d;
    detect_init(&d, 3);
    /* (20 ms of rest first: the detector learns the rest point after init) */
    for (uint32_t t = 0; t < 24000; t += 100)
        for (uint8_t p = 0; p < 3; p++) detect_sample(&d, p, t >= 21000 && t < 22500 ? 912 : 512, t + p);
    detect_hit_t out[2];
    uint8_t n = detect_poll(&d, 40000, out, 2);
    CHECK(n == 2, "buffer of two gets two hits, got %u", n);
    CHECK(out[0].onset_us <= out[1].onset_us, "sorted by onset");
}

/* Feed pad 0 a 1.5 ms contact from t = 21000 (after 20 ms of rest, which
 * the detector learns the rest point from; the sample at 20900 at rest, so
 * its onset is 20950) the way the firmware does (sample, then poll that
 * pad, every 100 us); at change_at_us set every pad's scan time to
 * new_scan_us. Returns when the hit was decided (0xFFFFFFFF: never). */
static uint32_t decided_at(uint32_t change_at_us, uint16_t new_scan_us) {
    detect_t d;
    detect_init(&d, 2);
    for (uint32_t t = 100; t < 40000; t += 100) {
        if (t == change_at_us) {
            d.pad[0].scan_us = new_scan_us;
            d.pad[1].scan_us = new_scan_us;
            detect_settings_changed(&d);
        }
        detect_sample(&d, 0, t >= 21000 && t <= 22500 ? 912 : 512, t);
        detect_sample(&d, 1, 512, t + 50);
        detect_hit_t h;
        if (detect_poll_pad(&d, 0, t + 50, &h)) return t + 50;
    }
    return 0xFFFFFFFFu;
}

/* Run s through d at 148 us a scan until pace_from_us, then at 148 +
 * slower_us: a burst's pacing ("Pacing" in firmware/README.md) as one
 * step. Each pad counts its time at the rails in its own sample gaps, so
 * after the step the same number of samples at the rails counts as a
 * longer time than before it. */
static void run_paced(scenario_t *s, detect_t *d, uint32_t pace_from_us, unsigned slower_us, hits_t *out) {
    run_scans(s, d, 0, 148u, pace_from_us, 148u + slower_us, out);
}

/* Steps 20 and 21's burst: a sharp 12 V slap on pad 4 at 50000 + shift us,
 * then `second` (its time shifted too), over 5 mV of noise in 100 ms, run
 * through a fresh detector paced from 50400 + shift (slower_us more a
 * scan): the sampler slows between the slap's samples at the rails and
 * the second contact's. */
static void run_paced_after_slap(scenario_t *s, const shaped_t *second, uint32_t shift, unsigned slower_us, hits_t *h) {
    scn_init(s);
    s->duration_us = 100000;
    s->noise_mv = 5;
    add_shaped(s, 3, 50000 + shift, 12000, SCN_EXPECT_SLAP, 215, 0.48, 951, 3833, -1);
    add_shaped(s, second->pad0, second->t_us + shift, second->mv, second->expect, second->rise, second->ring, second->hz,
               second->tau, second->pol);
    detect_t d;
    detect_init(&d, 8);
    run_paced(s, &d, 50400u + shift, slower_us, h);
}

/* Step 20: a sharp 12 V slap shakes its neighbour to the rails 543 us
 * later (4.56 V, 0.38 of it, as in a bench round: seed 20261201,
 * table_063). The sampler slows between the slap's samples at the rails
 * and the shake's (each scan 4 to 24 us longer), so the shake can count up to
 * tens of us more there than the slap did, at as many samples: it still
 * stays out, at every phase (with the tolerance off,
 * -DDETECT_XT_CLIP_TOL_US=0u, it comes out as a slap at 11 of the 114).
 * A player's own 9 V slap there, at the rails for samples more, is found
 * at every one. */
static void test_clipped_shake_in_paced_scans(void) {
    static scenario_t s;
    static hits_t h;
    /* on pad 5: the slap's shake (hand 0), a player's own slap (hand 1) */
    const shaped_t second[2] = {{4, 50543, 4560, SCN_EXPECT_NONE, 140, 0.8, 1963, 3467, 1},
                                {4, 50543, 9000, SCN_EXPECT_SLAP, 330, 0.5, 1900, 5000, 1}};
    for (int hand = 0; hand < 2; hand++) {
        int wrong = 0;
        for (uint32_t shift = 0; shift < 148u; shift += 8u) {
            for (unsigned slower = 4u; slower <= 24u; slower += 4u) {
                run_paced_after_slap(&s, &second[hand], shift, slower, &h);
                int found = hit_near(&h, 4, 50543.0 + shift) >= 0;
                if (found != hand || hit_near(&h, 3, 50000.0 + shift) < 0) wrong++;
            }
        }
        if (hand)
            CHECK(wrong == 0, "a player's slap at the rails 543 us after a neighbour's: lost (or the neighbour's) at %d of 114 phases", wrong);
        else
            CHECK(wrong == 0, "a clipped shake counted in a paced burst's longer gaps: a false slap (or the slap lost) at %d of 114 phases", wrong);
    }
}

/* Step 21: a player's sharp 9 V slap, ringing hard (at 0.85 of its
 * peak), 600 us after a neighbour's 12 V slap, when the sampler has
 * slowed by 80 us a scan in between. It rings at the rails as long as the
 * first slap's scan did, but counts fewer samples there (its pad is
 * sampled less often): compared in time, it is no shake of the first
 * slap, and it is found at every phase (with step 14's count of samples,
 * 2.14.0's first build, at 3 of the 19). Its own ringing at the rails
 * restarts its contact within the scan through the low-passed deviation:
 * step 23 leaves such a restart undated (a clipped contact's ringing is
 * uneven there), and dated 250 us back it was lost at 2 of the 19, as the
 * 12 V slap's shake (step 23's first build, stop 39).
 * Since 2.22.0 (LP_MARGIN 10, was 25) that restart comes sooner, and the
 * slap is lost at 6 of the 19 phases (4 through the capacitor across the
 * disc, at 6.3 V at the pin): a known cost, taken because the lower margin
 * loses fewer slaps over the table model's rounds (detect.h, LP_MARGIN).
 * The check holds the line there: with LP_MARGIN 18 or more it is 0 again. */
#define RAILS_IN_PACED_SCANS_LOST_KNOWN 6
static void test_rails_in_time_in_paced_scans(void) {
    static scenario_t s;
    static hits_t h;
    const shaped_t ringing_slap = {4, 50600, 9000, SCN_EXPECT_SLAP, 140, 0.85, 1900, 6000, 1};
    int lost = 0;
    for (uint32_t shift = 0; shift < 148u; shift += 8u) {
        run_paced_after_slap(&s, &ringing_slap, shift, 80u, &h);
        if (hit_near(&h, 4, 50600.0 + shift) < 0 || hit_near(&h, 3, 50000.0 + shift) < 0) lost++;
    }
    CHECK(lost <= RAILS_IN_PACED_SCANS_LOST_KNOWN,
          "a slap ringing at the rails, sampled slower than the slap before it: lost at %d of 19 phases (known: %d)", lost,
          RAILS_IN_PACED_SCANS_LOST_KNOWN);
}

/* Step 36: two shakes overlapping on a pad at rest make one first
 * half-wave a little longer than a shake's, peaking at the second's crest
 * near its end, where a hand's push peaks about halfway. A bench round
 * (seed 7, table_063's round at 550 ms, shifted; every pad through the
 * front end at 0.7): pad 1's slap shakes pad 3 (0.65 V), and pad 4's,
 * 0.6 ms later, shakes it again 372 us after that (1.05 V; the round's
 * were 0.69 and 1.17 V, whose sum came out over 1.5 times the slap
 * threshold at one phase, where step 36 leaves a contact to step 28); no
 * contact before is 7 times as loud as the two together (step 28's
 * overlap), and without step 36 (-DDETECT_LATE_PEAK=0) they came out as a
 * slap on pad 3 at 4 of the 19 phases. Now at none, and the round's three
 * slaps are found at every phase. */
static void test_overlapping_shakes_peak_late(void) {
    static const shaped_t round[] = {
        {0, 30034, 3444, SCN_EXPECT_SLAP, 656, 0.46, 1860, 4624, -1},
        {1, 30342, 1088, SCN_EXPECT_NONE, 165, 0.61, 2445, 4000, 1},
        {7, 30342, 1264, SCN_EXPECT_NONE, 177, 0.93, 2681, 4000, 1},
        {2, 30597, 650, SCN_EXPECT_NONE, 162, 0.76, 2528, 3709, 1},
        {6, 30597, 627, SCN_EXPECT_NONE, 196, 0.84, 2286, 4000, -1},
        {3, 30633, 3186, SCN_EXPECT_SLAP, 598, 0.35, 847, 4897, 1},
        {3, 30908, 382, SCN_EXPECT_NONE, 114, 0.73, 2530, 3796, -1},
        {5, 30908, 331, SCN_EXPECT_NONE, 114, 0.83, 2373, 3751, 1},
        {4, 30941, 1274, SCN_EXPECT_NONE, 133, 0.85, 2434, 3911, 1},
        {2, 30969, 1050, SCN_EXPECT_NONE, 166, 0.89, 2677, 4000, 1},
        {4, 31029, 282, SCN_EXPECT_NONE, 165, 0.64, 2368, 4000, -1},
        {5, 31158, 730, SCN_EXPECT_NONE, 174, 0.72, 2520, 3609, -1},
        {6, 31256, 580, SCN_EXPECT_NONE, 180, 0.92, 2628, 3959, -1},
        {1, 31305, 526, SCN_EXPECT_NONE, 141, 0.66, 2377, 4000, -1},
        {5, 31444, 3468, SCN_EXPECT_SLAP, 391, 0.55, 1683, 7889, 1},
        {7, 31486, 417, SCN_EXPECT_NONE, 174, 0.90, 2328, 3944, -1},
        {0, 31507, 354, SCN_EXPECT_NONE, 159, 0.70, 2374, 4000, -1},
        {4, 31752, 1200, SCN_EXPECT_NONE, 100, 0.95, 2420, 4000, -1},
        {6, 31780, 999, SCN_EXPECT_NONE, 199, 0.92, 2516, 4000, -1},
        {3, 31969, 794, SCN_EXPECT_NONE, 179, 0.65, 2348, 3856, 1},
        {2, 32067, 596, SCN_EXPECT_NONE, 124, 0.64, 2413, 3929, 1},
        {7, 32116, 576, SCN_EXPECT_NONE, 144, 0.84, 2404, 3905, 1},
        {1, 32297, 336, SCN_EXPECT_NONE, 146, 0.63, 2377, 4000, 1},
        {0, 32318, 333, SCN_EXPECT_NONE, 129, 0.64, 2454, 4000, -1},
    };
    const int n = (int)(sizeof round / sizeof round[0]);
    unsigned keep = SCAN_PERIOD_US;
    SCAN_PERIOD_US = 148u;
    int phases = 0;
    int false_on_3 = phases_with_a_hit_on(round, n, 60000u, 0.7, 2, &phases);
    CHECK(false_on_3 == 0, "two overlapping shakes on pad 3 came out as a hit at %d of %d phases", false_on_3, phases);
    const int slaps[] = {0, 5, 14};
    for (int i = 0; i < 3; i++) {
        double worst;
        int lost = slap_lost_at_phases(round, n, 60000u, 0.7, slaps[i], &worst, &phases, NULL);
        CHECK(lost == 0, "pad %d's slap lost at %d of %d phases", round[slaps[i]].pad0 + 1, lost, phases);
    }
    SCAN_PERIOD_US = keep;
}

/* Step 37: a slap landing on a pad still ringing from a neighbour's shake
 * (pad 4: a 1.5 V shake of a 10.6 V slap, as on seed 2's table_146), its
 * rise hidden under the ringing until it crosses: the walk back finds no
 * sample of it before the one that crossed, and the line through its first
 * two samples stops at the level of the sample before, the ringing's. The
 * contact began early in that gap: reported at the sample before, it is
 * within 150 us at every phase of the samples (111 and 103 us at worst for
 * a soft 1.3 V and a 1.8 V slap 1.35 ms after the shake; reported where the
 * rules date it, -DDETECT_MOVING_REPORT_US=0u: 191 and 183 us late). */
static void test_moving_contact_reported_at_the_sample_before(void) {
    const double mv[2] = {1300.0, 1800.0}, rise[2] = {650.0, 489.0};
    for (int k = 0; k < 2; k++) {
        const shaped_t ev[] = {
            {0, 50000, 10626, SCN_EXPECT_SLAP, 339, 0.62, 1747, 6283, 1}, /* the neighbour's hard slap */
            {3, 50720, 1477, SCN_EXPECT_NONE, 200, 0.69, 1871, 3012, 1},  /* its shake on pad 4 */
            {3, 52070, mv[k], SCN_EXPECT_SLAP, rise[k], 0.31, 1483, 5496, -1}, /* the player's slap */
        };
        char what[48];
        snprintf(what, sizeof what, "a %.0f mV slap on a ringing pad", mv[k]);
        check_found_at_every_phase(ev, 3, 150000u, 0.7, 2, 150.0, what);
    }
}

/* Step 38: a soft slap on a pad at rest but for a faint shake from a far
 * pad (its sample before the crossing just past the gate), a nearer pad's
 * shake landing on its rise 200 us in (after the bench's seed 1,
 * table_023, pad 8). The walk back stops at the knee the slap's start makes
 * between two samples, and the line through the rise's first two samples,
 * steepened by the shake, dated it up to ~165 us late. Reported at the
 * sample before the crossing: within 150 us at every phase of the samples
 * (108 us at worst; with -DDETECT_KNEE_REPORT=0, 160 us late). */
static void test_knee_at_rest_reported_at_the_sample_before(void) {
    const shaped_t ev[] = {
        {2, 49285, 1730, SCN_EXPECT_SLAP, 300, 0.50, 1500, 6000, 1},  /* a far pad's slap */
        {7, 50446, 120, SCN_EXPECT_NONE, 174, 0.97, 1894, 3308, 1},   /* its faint shake on pad 8 */
        {1, 50000, 10178, SCN_EXPECT_SLAP, 300, 0.55, 1500, 6000, 1}, /* a nearer pad's hard slap */
        {7, 50977, 1201, SCN_EXPECT_NONE, 158, 0.61, 1638, 3417, 1},  /* its shake on pad 8 */
        {7, 50776, 1540, SCN_EXPECT_SLAP, 592, 0.53, 1578, 5692, 1},  /* the player's soft slap */
    };
    check_found_at_every_phase(ev, 5, 150000u, 1.0, 4, 150.0, "a soft slap on a pad at rest, a shake landing on its rise");
}

static void test_decide_time(void) {
    /* A contact is decided once every pad that could have caused it has its
     * peak (a cause began before it, and scans as long): onset 20950 + 2000
     * (longest scan) + 500 (DETECT_DECIDE_MARGIN_US), not before... */
    uint32_t t = decided_at(0, 2000);
    CHECK(t >= 23450 && t <= 23550, "decided at %u us, expected at 23450..23550 (onset + 2.5 ms)", t);
    /* ...and a scan time changed while it scans applies to it at once. */
    t = decided_at(22000, 1000);
    CHECK(t >= 22450 && t <= 22550, "scan cut to 1 ms at 22000 us: decided at %u us, expected 22450..22550", t);
}

/* The noise floor comes back down after a noisy stretch, on every pad and
 * at any fixed scan period: its count down is due once in ~32 quiet
 * samples whatever phase a pad's samples fall on. (Before 2.19.0 it was
 * due when the sample's time ended in five 0 bits: at 148 us a scan, 20
 * mod 32, six pads of eight never saw that, and their floors only rose,
 * to 70-110 counts within ~10 s of a busy table; a soft slap no longer
 * passed the gate.) */
static void test_noise_floor_comes_down(void) {
    static const unsigned periods[] = {148, 160, 200, 296};
    for (unsigned k = 0; k < sizeof periods / sizeof periods[0]; k++) {
        unsigned period = periods[k];
        detect_t d;
        detect_init(&d, 8);
        double t0 = 1000.0;
        for (int scan = 0; scan < 200; scan++, t0 += period) /* the start-up's learning */
            for (int p = 0; p < 8; p++) detect_sample(&d, (uint8_t)p, 512u, (uint32_t)(t0 + p * (period / 8.0)));
        for (int p = 0; p < 8; p++) d.st[p].nf = 40u; /* what a noisy stretch left */
        /* then quiet: 3,000 scans (0.4-0.9 s), 40 counts down needing ~1,300 */
        for (int scan = 0; scan < 3000; scan++, t0 += period)
            for (int p = 0; p < 8; p++) detect_sample(&d, (uint8_t)p, 512u, (uint32_t)(t0 + p * (period / 8.0)));
        for (int p = 0; p < 8; p++)
            CHECK(d.st[p].nf == 0u, "pad %d's noise floor at %u us a scan: %u after 3,000 quiet scans (from 40)", p + 1,
                  period, d.st[p].nf);
    }
}

int main(int argc, char **argv) {
    if (getenv("TEST_SCAN_PERIOD_US")) SCAN_PERIOD_US = (unsigned)atoi(getenv("TEST_SCAN_PERIOD_US"));
    /* The firmware's scan period depends on the build and on what it is
     * sending; the detector must hold from fast to the 200 us budget. */
    static const unsigned periods[] = {100, 140, 183, 200};
    unsigned fixed = SCAN_PERIOD_US;
    for (unsigned k = 0; k < sizeof periods / sizeof periods[0]; k++) {
        SCAN_PERIOD_US = getenv("TEST_SCAN_PERIOD_US") ? fixed : periods[k];
        printf("-- scan period %u us\n", SCAN_PERIOD_US);
        for (int i = 1; i < argc; i++) test_scenario(argv[i]);
        if (getenv("TEST_SCAN_PERIOD_US")) break;
    }
    SCAN_PERIOD_US = fixed;
    test_touch_off();
    test_xtalk_off();
    test_mask();
    test_mask_escape_is_a_hand();
    test_reported_pad_every_other_scan();
    test_touch_is_a_push();
    test_onset_not_peak();
    test_poll_buffer_small();
    test_decide_time();
    test_hand_on_ringing_pad();
    test_knee();
    test_slow_hand_under_a_shake();
    test_a_slap_shakes_a_pad_once();
    test_overlapping_shakes();
    test_disc_learnt();
    test_pair_delay_learnt();
    test_pair_delay_on_a_moving_pad();
    test_pair_delay_follows_its_shakes();
    test_pair_delay_bound_through_a_third_pad();
    test_pair_delay_most_through_a_third_pad();
    test_shake_once_from_its_own_source();
    test_mask_after_a_sharp_report();
    test_delay_floor();
    test_nearer_shake_smaller();
    test_short_clipped_shake("sim/scenarios/short_clipped_shake.scn");
    test_push_under_a_shake("sim/scenarios/push_under_a_shake.scn");
    test_push_sized_by_low_pass("sim/scenarios/push_sized_by_low_pass.scn");
    test_barely_clipped_source();
    test_shake_of_a_doubted_slap();
    test_shake_lobe_learnt();
    test_quiet_slap_after_a_louder_one();
    test_ring_level_decays_in_time();
    test_ring_level_within_the_rails();
    test_clipped_shake_in_paced_scans();
    test_rails_in_time_in_paced_scans();
    test_overlapping_shakes_peak_late();
    test_push_on_ringing_dated_back();
    test_push_on_ringing_reported_by_its_shape();
    test_moving_contact_reported_at_the_sample_before();
    test_knee_at_rest_reported_at_the_sample_before();
    test_work_taken_is_told();
    test_work_held_back();
    test_noise_floor_comes_down();
    printf("sizeof(detect_t) = %u bytes\n", (unsigned)sizeof(detect_t));
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("all detection tests passed\n");
    return 0;
}
