/*
 * scenario.h - synthetic piezo waveforms for testing the pad box, from a
 * small line-based scenario file. Used by the host tests of the detection
 * core (firmware/tests) and by the simavr harness (firmware/sim/harness.c),
 * and read by the Python tests (tests/firmware/test_firmware_sim.py) for the truth.
 *
 * Scenario file, one directive a line, '#' starts a comment:
 *
 *   duration_us <us>                 how long to run (default 300000)
 *   seed <n>                         noise generator seed (default 1)
 *   noise_mv <mv>                    uniform noise of +-mv on every pad
 *   hum_mv <mv> [hz]                 mains hum (default 50 Hz), phase per pad
 *   drift_mv <mv> [period_us]        slow DC drift of the rest point (a sine,
 *                                    default period 2 s), phase per pad
 *   frontend biased|halfwave         the input circuit (default biased): biased
 *                                    puts the signal on a mid-supply rest point
 *                                    (bias_mv), both half-waves seen; halfwave is
 *                                    the old wiring, negative half clamped at 0
 *   bias_mv <mv>                     the rest point of the biased input (2500)
 *   gain <g> [<g2> ... <g8>]         the biased input's gain, one for every pad
 *                                    or one a pad (pad 1 first), 0 < g <= 1
 *                                    (default 1): a capacitor across the disc
 *                                    divides what it sends, and the hum and drift
 *                                    picked up with it, before the ADC's own
 *                                    noise. The halfwave input (the old wiring,
 *                                    no capacitor) ignores it.
 *   mode button                      run the box in button mode (jumper D12 low)
 *   hit <pad> <t_us> <peak_mv> <expect> [rise=us] [ring=r] [hz=f] [tau=us] [pol=1|-1]
 *        a contact on pad (1-based) starting at t_us (the moment of contact,
 *        the truth an onset is judged against): a half-sine pulse of peak_mv
 *        lasting 2*rise us (default rise 700), then ringing at hz (default
 *        1500) that swings the other way first, starting at ring*peak_mv
 *        (default 0.5) and decaying with time constant tau us (default
 *        5000). pol=-1 is a disc wired the other way round: the whole
 *        response is inverted. The pin is clamped to 0..5000 mV (the clamp
 *        diodes): a hard slap clips at the rails.
 *        expect: slap | touch | press | none (crosstalk or too faint: no hit;
 *        a press is a slow push, reported as a slap or a touch).
 *   spike <pad> <t_us> <mv> <width_us>
 *        an electrical glitch: a rectangular pulse (static discharge, a
 *        motor starting); never a contact, always expected to give no hit.
 *   button <pad> <t_us> <hold_us> <expect>
 *        a button pad pressed (pin low) at t_us for hold_us.
 *   send <t_us> <command body>       the host sends "<body>*CRC\n" at t_us
 *
 * Crosstalk is written out as explicit small hits on the neighbours: table
 * vibration is short and sharp (rise 100..200 us) and rings at the table's
 * own frequency, unlike a hand's half-millisecond push.
 */
#ifndef PADBOX_SCENARIO_H
#define PADBOX_SCENARIO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCN_MAX_EVENTS 4096
#define SCN_MAX_SENDS 32
#define SCN_PADS 8

enum { SCN_EXPECT_NONE = 0, SCN_EXPECT_SLAP, SCN_EXPECT_TOUCH, SCN_EXPECT_PRESS };
enum { SCN_FRONTEND_BIASED = 0, SCN_FRONTEND_HALFWAVE };

typedef struct {
    uint8_t pad;      /* 0-based */
    uint8_t is_button;
    uint8_t is_spike;
    uint8_t expect;
    uint32_t t_us;
    double peak_mv;
    double rise_us;
    double ring;
    double hz;
    double tau_us;
    double pol;       /* +1, or -1 for a disc wired the other way round */
    uint32_t hold_us; /* buttons */
} scn_event_t;

typedef struct {
    uint32_t t_us;
    char body[80];
} scn_send_t;

typedef struct {
    uint32_t duration_us;
    uint32_t seed;
    double noise_mv;
    double hum_mv;
    double hum_hz;
    double drift_mv;
    double drift_period_us;
    double bias_mv;
    double gain[SCN_PADS]; /* the biased input's, per pad (1: no divider) */
    uint8_t frontend; /* SCN_FRONTEND_* */
    uint8_t button_mode;
    int nevents;
    scn_event_t ev[SCN_MAX_EVENTS];
    int nsends;
    scn_send_t send[SCN_MAX_SENDS];
    uint32_t rng;
    /* Rendering index (built on first use, rebuilt after an event is added):
     * each pad's events in file order, and where the live ones begin, so a
     * sample sums only the events that can still be heard. */
    int indexed;
    int pad_n[SCN_PADS];
    int pad_sorted[SCN_PADS];
    int pad_from[SCN_PADS];
    double pad_last_t[SCN_PADS];
    uint16_t pad_ev[SCN_PADS][SCN_MAX_EVENTS];
} scenario_t;

/** Defaults: 300 ms of silence. */
void scn_init(scenario_t *s);

/** Parse a scenario file; on error print "path:line: reason" to stderr and return -1. */
int scn_load(scenario_t *s, const char *path);

/** Add a contact (as a "hit" line would). */
void scn_add_hit(scenario_t *s, int pad0, uint32_t t_us, double peak_mv, int expect);

/** The noiseless voltage of one event at time t_us (may be negative). */
double scn_event_mv(const scn_event_t *e, double t_us);

/** The mains hum on pad (0-based) at t_us (0 when there is none). */
double scn_hum_mv(const scenario_t *s, int pad0, double t_us);

/** When the event's own waveform plus the hum first reaches thr_mv (-1: never):
 * the true onset a detector with that threshold should report. */
double scn_truth_onset(const scenario_t *s, const scn_event_t *e, double thr_mv);

/** The voltage on pad (0-based) at t_us: events + hum + drift + noise, on the
 * front end's rest point, clamped 0..5000 mV. */
double scn_pad_mv(scenario_t *s, int pad0, double t_us);

/** Whether the button of pad (0-based) is held at t_us. */
int scn_button_down(const scenario_t *s, int pad0, double t_us);

/** The ADC reading (AVCC = 5000 mV reference), as simavr computes it. */
uint16_t scn_adc(double mv);

#ifdef __cplusplus
}
#endif

#endif
