/*
 * hostrun.c - the detection core (padbox/detect.c) on the host, fed a
 * scenario as the firmware samples it: pads in turn, one conversion slot
 * apart, every sample stamped with the time of its sample-and-hold, one
 * pad's decision polled per slot. A fast stand-in for the simavr harness
 * when a detection change is tried on many rounds (bench_padbox_detection
 * --host); the harness runs the real image and has the last word.
 *
 *   hostrun [--slot-us 18.5] [--jitter-us 0] [--learn-scans 128] [--dump FROM_US TO_US] [--trace PAD]
 *           [--adclog FILE] [--show-learnt] SCENARIO...
 *
 * Heavy work (a contact's start, a decision) is DETECT_WORK_PER_SCAN units a
 * scan, as in the image, and each scan's detect_slow (detect.h, step 16)
 * is its period's, as the image's loop sets it: from the slot, or with
 * --adclog from the period the image's sampler took for that scan.
 *
 * --adclog FILE: the samples are taken when the image in simavr took them
 * (the harness's HARNESS_ADCLOG file), to replay one of its runs here; each
 * is stamped where the image stamps it (schedule_times below).
 *
 * Prints, per scenario, "FILE <path>" and then one line per hit:
 * "HIT <pad 1-based> <onset us> <S|T> <peak>", in the order the box would
 * send them. Hits before the box's start-up learning ends are not printed
 * (the firmware sends nothing before its HELLO). --dump also prints every
 * sample taken from FROM_US to TO_US: "SAMPLE <pad 1-based> <t us> <raw>";
 * --trace PAD (with --dump) the detector's state of that pad after each of its samples.
 * --show-learnt: after each scenario, what the detector learnt of the
 * table: "LEARNT DISC <pad> <-1|0|1>" (each disc's polarity), "LEARNT FLOOR
 * <pad> <counts>" (each pad's noise floor at the end) and "LEARNT DELAY <a>
 * <b> <us>" (each pair's vibration delay, 0 if not known).
 * Built with -DDETECT_ORACLE, the table's truth can stand in for the
 * learning (oracle_setup below): an experiment, never the firmware.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "../padbox/detect.h"
#include "scenario.h"

static scenario_t scn;
static detect_t det;
static int trace_pad = -1;
static double dump_from = -1.0, dump_to = -1.0;
static int show_learnt;

#ifdef DETECT_ORACLE
/* Built with -DDETECT_ORACLE (an experiment, never the firmware's): the
 * table's truth from the scenario's comments, as if the detector had
 * learnt it perfectly: ORACLE_DISC=1 each disc's polarity, ORACLE_DELAY=1
 * each pair's delay, ORACLE_COUPLING=1 each pair's coupling; ORACLE_REST=1
 * puts a moving pad's rest where it truly is. What learning the table, or a
 * perfect rest, could bring at best. */
static void oracle_setup(const char *path) {
    FILE *f = fopen(path, "r");
    char line[300];
    int disc = getenv("ORACLE_DISC") != NULL, delay = getenv("ORACLE_DELAY") != NULL,
        coupling = getenv("ORACLE_COUPLING") != NULL;
    if (disc)
        for (int q = 0; q < 8; q++) det.st[q].disc = 1, det.st[q].disc_votes = 8;
    while (f && fgets(line, sizeof line, f)) {
        char *r = strstr(line, "reversed discs: ");
        if (disc && r)
            for (r += 16; *r >= '1' && *r <= '8';) {
                det.st[*r - '1'].disc = -1, det.st[*r - '1'].disc_votes = -8;
                r++;
                while (*r == ',' || *r == ' ') r++;
            }
        int to, from, dl;
        char *c = strstr(line, "crosstalk from pad");
        if (delay && c && sscanf(line, "hit %d", &to) == 1 && sscanf(c, "crosstalk from pad %d: %*f x after %d", &from, &dl) == 2)
            det.oracle_delay[from - 1][to - 1] = dl;
        double k;
        if (coupling && c && sscanf(line, "hit %d", &to) == 1 && sscanf(c, "crosstalk from pad %d: %lf x", &from, &k) == 2)
            det.oracle_coupling[from - 1][to - 1] = (uint16_t)(k * 1000.0 + 0.5);
    }
    if (f) fclose(f);
}
#endif

/* One sample of pad ch (0-based) taken at t us and stamped at `stamp` us
 * (the image's count of its sampler's schedule: t unless an interrupt held
 * the sample-and-hold back), as the firmware takes it: fed, traced within
 * --dump, and that pad polled; a hit is printed if print_hits. */
static void take_sample(uint8_t ch, double t, double stamp, int print_hits) {
    /* (as the image's FIFO keeps it: a conversion's 8 high bits) */
    uint16_t v = detect_raw8((uint8_t)(scn_adc(scn_pad_mv(&scn, ch, t)) >> 2));
    uint32_t tu = (uint32_t)stamp;
    int dumped = t >= dump_from && t <= dump_to;
    if (dumped) printf("SAMPLE %u %u %u\n", ch + 1u, tu, v);
#ifdef DETECT_ORACLE
    if (getenv("ORACLE_REST") && det.st[ch].state != DETECT_REST && det.st[ch].base_q4 >= 0) {
        double r = scn.bias_mv + scn_hum_mv(&scn, ch, t); /* the true rest (an experiment) */
        if (scn.drift_mv > 0) r += scn.drift_mv * sin(2.0 * 3.14159265358979 * t / scn.drift_period_us + ch * 1.3);
        det.st[ch].base_q4 = (int16_t)(r * 1023.0 / 5000.0 * 16.0);
        det.st[ch].slope_q8 = 0;
    }
#endif
    detect_sample(&det, ch, v, tu);
    if (dumped && ch == trace_pad) {
        const detect_pad_state_t *st = &det.st[ch];
        printf("TRACE %u %u raw %u e %d state %u base %.1f slope %.2f ref %u lvl_a %u tick %u flags %u peak %u lobe %u"
               " env %u nf %u\n",
               ch + 1u, tu, v, (int)v - (st->base_q4 + 8) / 16, st->state, st->base_q4 / 16.0, st->slope_q8 / 256.0,
               st->ref, st->lvl_a, st->tick, st->c.flags, st->c.peak, st->c.lobe_us, st->env, st->nf);
    }
    detect_hit_t h;
    if (detect_poll_pad(&det, ch, tu, &h) && print_hits)
        printf("HIT %u %u %c %u\n", h.pad + 1u, h.onset_us, h.is_slap ? 'S' : 'T', h.peak);
}

/* The times the image stamps an adclog's samples with. The sampler's
 * sample-and-holds fall on a grid of Timer2's 0.5 us ticks (8 cycles), the
 * pads of a scan one period apart, and the image counts each sample's time
 * on that schedule; but a receive or clock interrupt can hold one back by
 * up to ~3 us, which the harness logs as it happened. So, per scan (pad 1
 * to the next pad 1), the period is the commonest step between two of its
 * samples to the nearest tick (also the scan's detect_slow), the scan's
 * start the commonest among the samples on the grid's phase, and each
 * sample is stamped where
 * the schedule puts it (never later than it was taken, at most 8 us
 * sooner; otherwise as taken). t and nominal in cycles (1/16 us). */
/* The step from sample i to the next, to the nearest tick (8 cycles). */
static long long tick_step(const long long *t, size_t i) { return (t[i + 1] - t[i] + 4) / 8 * 8; }

static void schedule_times(const int *ch, const long long *t, long long *nominal, long long *period_of, size_t n) {
    int phase_votes[8] = {0}, phase = 0;
    for (size_t i = 0; i < n && i < 4096; i++) phase_votes[t[i] & 7]++;
    for (int k = 1; k < 8; k++)
        if (phase_votes[k] > phase_votes[phase]) phase = k;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && ch[b] != 0) b++;
        /* (the scan's period: the commonest step between two samples, to the
         * nearest tick: a sample is held back by a few cycles at most, and in
         * a paced burst few pairs may be both on the grid) */
        long long period = 0, base = 0;
        int best = 0;
        for (size_t i = a; i + 1 < b; i++) {
            if (ch[i + 1] != ch[i] + 1) continue;
            long long p = tick_step(t, i);
            int votes = 0;
            for (size_t j = a; j + 1 < b; j++) votes += ch[j + 1] == ch[j] + 1 && tick_step(t, j) == p;
            if (votes > best) best = votes, period = p;
        }
        best = 0;
        for (size_t i = a; period && i < b; i++) {
            if ((t[i] & 7) != phase) continue;
            long long s0 = t[i] - ch[i] * period;
            int votes = 0;
            for (size_t j = a; j < b; j++) votes += (t[j] & 7) == phase && t[j] - ch[j] * period == s0;
            if (votes > best) best = votes, base = s0;
        }
        for (size_t i = a; i < b; i++) {
            long long s = base + ch[i] * period;
            nominal[i] = period && s <= t[i] && t[i] - s <= 8 * 16 ? s : t[i];
            period_of[i] = period;
        }
        a = b;
    }
}

/* --show-learnt: what the detector learnt of the table, at a scenario's end. */
static void print_learnt(void) {
    if (!show_learnt) return;
    for (int p = 0; p < 8; p++) printf("LEARNT DISC %d %d\n", p + 1, det.st[p].disc);
    for (int p = 0; p < 8; p++) printf("LEARNT FLOOR %d %u\n", p + 1, det.st[p].nf);
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            printf("LEARNT DELAY %d %d %u\n", a + 1, b + 1, detect_pair_delay(&det, (uint8_t)a, (uint8_t)b));
}

int main(int argc, char **argv) {
    double slot_us = 18.5, jitter_us = 0.0; /* (the image's sampler on a quiet table) */
    unsigned learn_scans = 128;
    const char *adclog = NULL;
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (first + 1 >= argc) break;
        if (!strcmp(argv[first], "--slot-us")) slot_us = atof(argv[first + 1]);
        else if (!strcmp(argv[first], "--jitter-us")) jitter_us = atof(argv[first + 1]);
        else if (!strcmp(argv[first], "--learn-scans")) learn_scans = (unsigned)atoi(argv[first + 1]);
        else if (!strcmp(argv[first], "--trace")) trace_pad = atoi(argv[first + 1]) - 1;
        else if (!strcmp(argv[first], "--adclog")) adclog = argv[first + 1];
        else if (!strcmp(argv[first], "--show-learnt")) {
            show_learnt = 1;
            first--; /* (no value) */
        }
        else if (!strcmp(argv[first], "--dump") && first + 2 < argc) {
            dump_from = atof(argv[first + 1]);
            dump_to = atof(argv[first + 2]);
            first++;
        }
        else {
            fprintf(stderr, "unknown option %s\n", argv[first]);
            return 2;
        }
    }
    if (first >= argc) {
        fprintf(stderr,
                "usage: %s [--slot-us US] [--jitter-us US] [--learn-scans N] [--dump FROM_US TO_US] [--trace PAD]"
                " [--adclog FILE] SCENARIO...\n",
                argv[0]);
        return 2;
    }
    for (int a = first; a < argc; a++) {
        scn_init(&scn);
        if (scn_load(&scn, argv[a]) != 0) return 1;
        detect_init(&det, 8);
#ifdef DETECT_ORACLE
        oracle_setup(argv[a]);
#endif
        printf("FILE %s\n", argv[a]);
        uint32_t rng = 12345u;
        double t = 2000.0; /* the box's set-up before its first scan */
        unsigned scans = 0;
        if (adclog) { /* the samples at the times the image took them (harness HARNESS_ADCLOG) */
            FILE *f = fopen(adclog, "r");
            if (!f) {
                fprintf(stderr, "cannot read %s\n", adclog);
                return 1;
            }
            static int chs[1 << 21]; /* (39 s of samples; the bench's files are 1.2 s at most) */
            static long long cyc[1 << 21], nominal[1 << 21], period_of[1 << 21];
            size_t n = 0;
            int ch;
            double tl;
            while (fscanf(f, "%d %lf", &ch, &tl) == 2) {
                if (n == sizeof chs / sizeof chs[0]) {
                    fprintf(stderr, "%s: more samples than %zu\n", adclog, n);
                    return 1;
                }
                chs[n] = ch;
                cyc[n++] = llround(tl * 16.0); /* (the harness logs cycles / 16 to four places: exact) */
            }
            fclose(f);
            schedule_times(chs, cyc, nominal, period_of, n);
            detect_slow = 0;
            for (size_t i = 0; i < n; i++) {
                /* (a scan's start: how slow it is, from its period, as the image's loop has it; cycles a slot / 2 = us a scan of 8) */
                if (chs[i] == 0) detect_slow = detect_slowness((uint16_t)(period_of[i] / 2));
                take_sample((uint8_t)chs[i], (double)cyc[i] / 16.0, (double)nominal[i] / 16.0, 1);
                if (chs[i] == 7) det.work = DETECT_WORK_PER_SCAN;
            }
            print_learnt(); /* (a replay learns as the image did: its table's knowledge too) */
            continue;
        }
        detect_slow = detect_slowness((uint16_t)(8.0 * (slot_us + jitter_us / 2.0))); /* (a fixed slot: every scan alike) */
        while (t < scn.duration_us) {
            for (uint8_t p = 0; p < 8; p++) {
                take_sample(p, t, t, scans >= learn_scans);
                rng ^= rng << 13;
                rng ^= rng >> 17;
                rng ^= rng << 5;
                t += slot_us + jitter_us * ((double)(rng & 0xFFFF) / 65535.0);
            }
            det.work = DETECT_WORK_PER_SCAN; /* (as the image: heavy work a scan) */
            scans++;
        }
        print_learnt();
    }
    return 0;
}
