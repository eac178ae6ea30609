/*
 * scenario.c - synthetic piezo waveforms; see scenario.h for the file format.
 */
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void scn_init(scenario_t *s) {
    memset(s, 0, sizeof *s);
    s->duration_us = 300000;
    s->seed = 1;
    s->hum_hz = 50.0;
    s->drift_period_us = 2e6;
    s->bias_mv = 2500.0;
    for (int k = 0; k < SCN_PADS; k++) s->gain[k] = 1.0;
    s->frontend = SCN_FRONTEND_BIASED;
    s->rng = 1;
    /* SCN_FRONTEND=halfwave: run every scenario through the old wiring. */
    const char *fe = getenv("SCN_FRONTEND");
    if (fe && strcmp(fe, "halfwave") == 0) s->frontend = SCN_FRONTEND_HALFWAVE;
}

static scn_event_t *new_event(scenario_t *s) {
    if (s->nevents >= SCN_MAX_EVENTS) return NULL;
    scn_event_t *e = &s->ev[s->nevents++];
    memset(e, 0, sizeof *e);
    s->indexed = 0;
    e->rise_us = 700.0;
    e->ring = 0.5;
    e->hz = 1500.0;
    e->tau_us = 5000.0;
    e->pol = 1.0;
    return e;
}

void scn_add_hit(scenario_t *s, int pad0, uint32_t t_us, double peak_mv, int expect) {
    scn_event_t *e = new_event(s);
    if (!e) return;
    e->pad = (uint8_t)pad0;
    e->t_us = t_us;
    e->peak_mv = peak_mv;
    e->expect = (uint8_t)expect;
}

static int parse_expect(const char *w) {
    if (strcmp(w, "slap") == 0) return SCN_EXPECT_SLAP;
    if (strcmp(w, "touch") == 0) return SCN_EXPECT_TOUCH;
    if (strcmp(w, "none") == 0) return SCN_EXPECT_NONE;
    if (strcmp(w, "press") == 0) return SCN_EXPECT_PRESS;
    return -1;
}

int scn_load(scenario_t *s, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return -1;
    }
    char line[256];
    int lineno = 0;
    int rc = 0;
#define FAIL(msg)                                                   \
    do {                                                            \
        fprintf(stderr, "%s:%d: %s\n", path, lineno, msg);          \
        rc = -1;                                                    \
        goto done;                                                  \
    } while (0)
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char word[32];
        int used = 0;
        if (sscanf(line, "%31s%n", word, &used) != 1) continue;
        const char *rest = line + used;
        if (strcmp(word, "duration_us") == 0) {
            if (sscanf(rest, "%u", &s->duration_us) != 1) FAIL("duration_us needs microseconds");
        } else if (strcmp(word, "seed") == 0) {
            if (sscanf(rest, "%u", &s->seed) != 1) FAIL("seed needs a number");
            s->rng = s->seed ? s->seed : 1;
        } else if (strcmp(word, "noise_mv") == 0) {
            if (sscanf(rest, "%lf", &s->noise_mv) != 1) FAIL("noise_mv needs millivolts");
        } else if (strcmp(word, "hum_mv") == 0) {
            int n = sscanf(rest, "%lf %lf", &s->hum_mv, &s->hum_hz);
            if (n < 1) FAIL("hum_mv needs millivolts [hz]");
            if (n < 2) s->hum_hz = 50.0;
        } else if (strcmp(word, "drift_mv") == 0) {
            int n = sscanf(rest, "%lf %lf", &s->drift_mv, &s->drift_period_us);
            if (n < 1) FAIL("drift_mv needs millivolts [period_us]");
            if (n < 2) s->drift_period_us = 2e6;
            if (s->drift_period_us <= 0) FAIL("drift period must be positive");
        } else if (strcmp(word, "bias_mv") == 0) {
            if (sscanf(rest, "%lf", &s->bias_mv) != 1) FAIL("bias_mv needs millivolts");
        } else if (strcmp(word, "gain") == 0) {
            double g[SCN_PADS];
            int n = sscanf(rest, "%lf %lf %lf %lf %lf %lf %lf %lf", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7]);
            if (n != 1 && n != SCN_PADS) FAIL("gain needs one value for every pad or eight, one a pad");
            for (int k = 0; k < SCN_PADS; k++) {
                double v = g[n == 1 ? 0 : k];
                if (!(v > 0.0 && v <= 1.0)) FAIL("a gain is more than 0 and at most 1");
                s->gain[k] = v;
            }
        } else if (strcmp(word, "frontend") == 0) {
            char m[16];
            if (sscanf(rest, "%15s", m) != 1 || (strcmp(m, "biased") && strcmp(m, "halfwave")))
                FAIL("frontend is biased or halfwave");
            if (!getenv("SCN_FRONTEND")) s->frontend = strcmp(m, "halfwave") == 0 ? SCN_FRONTEND_HALFWAVE : SCN_FRONTEND_BIASED;
        } else if (strcmp(word, "mode") == 0) {
            char m[16];
            if (sscanf(rest, "%15s", m) != 1 || (strcmp(m, "button") && strcmp(m, "piezo")))
                FAIL("mode is piezo or button");
            s->button_mode = strcmp(m, "button") == 0;
        } else if (strcmp(word, "hit") == 0) {
            int pad, n = 0;
            unsigned t;
            double mv;
            char ex[16];
            if (sscanf(rest, "%d %u %lf %15s%n", &pad, &t, &mv, ex, &n) != 4)
                FAIL("hit needs <pad> <t_us> <peak_mv> <expect>");
            if (pad < 1 || pad > SCN_PADS) FAIL("pad must be 1..8");
            int expect = parse_expect(ex);
            if (expect < 0) FAIL("expect is slap, touch or none");
            scn_event_t *e = new_event(s);
            if (!e) FAIL("too many events");
            e->pad = (uint8_t)(pad - 1);
            e->t_us = t;
            e->peak_mv = mv;
            e->expect = (uint8_t)expect;
            const char *kv = rest + n;
            char item[64];
            int m;
            while (sscanf(kv, "%63s%n", item, &m) == 1) {
                kv += m;
                char *eq = strchr(item, '=');
                if (!eq) FAIL("options are key=value");
                *eq = 0;
                double v = atof(eq + 1);
                if (strcmp(item, "rise") == 0) e->rise_us = v;
                else if (strcmp(item, "ring") == 0) e->ring = v;
                else if (strcmp(item, "hz") == 0) e->hz = v;
                else if (strcmp(item, "tau") == 0) e->tau_us = v;
                else if (strcmp(item, "pol") == 0) e->pol = v < 0 ? -1.0 : 1.0;
                else FAIL("unknown hit option (rise, ring, hz, tau, pol)");
            }
            if (e->rise_us <= 0 || e->tau_us <= 0) FAIL("rise and tau must be positive");
        } else if (strcmp(word, "spike") == 0) {
            int pad;
            unsigned t, width;
            double mv;
            if (sscanf(rest, "%d %u %lf %u", &pad, &t, &mv, &width) != 4)
                FAIL("spike needs <pad> <t_us> <mv> <width_us>");
            if (pad < 1 || pad > SCN_PADS) FAIL("pad must be 1..8");
            scn_event_t *e = new_event(s);
            if (!e) FAIL("too many events");
            e->pad = (uint8_t)(pad - 1);
            e->is_spike = 1;
            e->t_us = t;
            e->peak_mv = mv;
            e->hold_us = width;
            e->expect = SCN_EXPECT_NONE;
        } else if (strcmp(word, "button") == 0) {
            int pad;
            unsigned t, hold;
            char ex[16];
            if (sscanf(rest, "%d %u %u %15s", &pad, &t, &hold, ex) != 4)
                FAIL("button needs <pad> <t_us> <hold_us> <expect>");
            if (pad < 1 || pad > SCN_PADS) FAIL("pad must be 1..8");
            int expect = parse_expect(ex);
            if (expect < 0) FAIL("expect is slap, touch or none");
            scn_event_t *e = new_event(s);
            if (!e) FAIL("too many events");
            e->pad = (uint8_t)(pad - 1);
            e->is_button = 1;
            e->t_us = t;
            e->hold_us = hold;
            e->expect = (uint8_t)expect;
        } else if (strcmp(word, "send") == 0) {
            unsigned t;
            int n = 0;
            if (sscanf(rest, "%u %n", &t, &n) != 1 || n == 0) FAIL("send needs <t_us> <body>");
            if (s->nsends >= SCN_MAX_SENDS) FAIL("too many sends");
            scn_send_t *snd = &s->send[s->nsends++];
            snd->t_us = t;
            snprintf(snd->body, sizeof snd->body, "%s", rest + n);
            size_t len = strlen(snd->body);
            while (len && snd->body[len - 1] == ' ') snd->body[--len] = 0;
        } else {
            FAIL("unknown directive");
        }
    }
done:
    fclose(f);
    return rc;
#undef FAIL
}

double scn_event_mv(const scn_event_t *e, double t_us) {
    if (e->is_button) return 0.0;
    if (e->is_spike) return (t_us >= e->t_us && t_us < (double)e->t_us + e->hold_us) ? e->peak_mv : 0.0;
    double tt = t_us - (double)e->t_us;
    if (tt < 0) return 0.0;
    double width = 2.0 * e->rise_us;
    if (tt < width) return e->pol * e->peak_mv * sin(M_PI * tt / width);
    double u = tt - width;
    if (u > 10.0 * e->tau_us) return 0.0;
    /* The plate swings back: the ringing starts the other way. */
    return -e->pol * e->peak_mv * e->ring * sin(2.0 * M_PI * e->hz * u / 1e6) * exp(-u / e->tau_us);
}

/* xorshift32: deterministic noise, the same on every machine. */
static double noise(scenario_t *s) {
    uint32_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s->rng = x;
    return ((double)x / 4294967295.0) * 2.0 - 1.0;
}

double scn_hum_mv(const scenario_t *s, int pad0, double t_us) {
    if (s->hum_mv <= 0) return 0.0;
    return s->hum_mv * sin(2.0 * M_PI * s->hum_hz * t_us / 1e6 + pad0 * 0.7);
}

double scn_truth_onset(const scenario_t *s, const scn_event_t *e, double thr_mv) {
    if (e->is_button) return e->t_us;
    for (double t = e->t_us; t < e->t_us + 20000.0; t += 1.0)
        if (fabs(scn_event_mv(e, t) + scn_hum_mv(s, e->pad, t)) >= thr_mv) return t;
    return -1;
}

/* When an event is silent for good (scn_event_mv() is 0 from then on). */
static double event_end_us(const scn_event_t *e) {
    if (e->is_button) return -1.0;
    if (e->is_spike) return (double)e->t_us + e->hold_us;
    return (double)e->t_us + 2.0 * e->rise_us + 10.0 * e->tau_us;
}

static void build_index(scenario_t *s) {
    for (int p = 0; p < SCN_PADS; p++) {
        s->pad_n[p] = 0;
        s->pad_sorted[p] = 1;
        s->pad_from[p] = 0;
        s->pad_last_t[p] = -1e300;
    }
    for (int i = 0; i < s->nevents; i++) {
        int p = s->ev[i].pad;
        if (p >= SCN_PADS) continue;
        int n = s->pad_n[p];
        if (n && s->ev[s->pad_ev[p][n - 1]].t_us > s->ev[i].t_us) s->pad_sorted[p] = 0;
        s->pad_ev[p][n] = (uint16_t)i;
        s->pad_n[p] = n + 1;
    }
    s->indexed = 1;
}

double scn_pad_mv(scenario_t *s, int pad0, double t_us) {
    double v = 0.0;
    if (!s->indexed) build_index(s);
    /* The same sum, in the same order, as over every event of the file: the
     * events skipped add exactly 0. */
    if (t_us < s->pad_last_t[pad0]) s->pad_from[pad0] = 0; /* time went back */
    s->pad_last_t[pad0] = t_us;
    const uint16_t *list = s->pad_ev[pad0];
    int n = s->pad_n[pad0], k = s->pad_from[pad0];
    while (k < n && event_end_us(&s->ev[list[k]]) < t_us) k++;
    s->pad_from[pad0] = k;
    for (; k < n; k++) {
        const scn_event_t *e = &s->ev[list[k]];
        if (s->pad_sorted[pad0] && (double)e->t_us > t_us) break;
        v += scn_event_mv(e, t_us);
    }
    v += scn_hum_mv(s, pad0, t_us);
    if (s->drift_mv > 0) v += s->drift_mv * sin(2.0 * M_PI * t_us / s->drift_period_us + pad0 * 1.3);
    /* (the divider before the pin: the disc's signal and what its leads pick up, not the ADC's noise) */
    if (s->frontend == SCN_FRONTEND_BIASED) v *= s->gain[pad0];
    if (s->noise_mv > 0) v += s->noise_mv * noise(s);
    if (s->frontend == SCN_FRONTEND_BIASED) v += s->bias_mv;
    if (v < 0) v = 0;
    if (v > 5000) v = 5000;
    return v;
}

int scn_button_down(const scenario_t *s, int pad0, double t_us) {
    for (int i = 0; i < s->nevents; i++) {
        const scn_event_t *e = &s->ev[i];
        if (e->is_button && e->pad == pad0 && t_us >= e->t_us && t_us < (double)e->t_us + e->hold_us) return 1;
    }
    return 0;
}

uint16_t scn_adc(double mv) {
    /* simavr: reg = mv * 0x3ff / vref, integer arithmetic. */
    uint32_t m = (uint32_t)mv;
    uint32_t reg = m * 0x3FFu / 5000u;
    return reg > 0x3FF ? 0x3FF : (uint16_t)reg;
}
