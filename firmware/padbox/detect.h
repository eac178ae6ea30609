/*
 * detect.h - piezo slap detection for the pad box, in plain C.
 *
 * No Arduino or AVR headers: the same code runs in the sketch and in the host
 * tests (firmware/tests, firmware/sim/hostrun.c). The caller feeds one ADC
 * sample per pad per scan, stamped with the device time of its
 * sample-and-hold in microseconds, and polls once per scan for finished
 * contacts. See firmware/README.md ("Detection") for the why of each part.
 *
 * The input is biased at mid-supply (docs/wiring.md): both half-waves of
 * the piezo reach the ADC. Per pad:
 *   1. REST: the pad's rest point and mains hum are followed by a
 *      level-and-slope tracker (an alpha-beta filter, ~200 Hz wide: it
 *      follows 50/60 Hz hum and DC drift within a few counts, a hand's
 *      push is ten times faster). Everything is judged on the deviation
 *      d = sample - predicted rest, either sign; hum never reaches a
 *      threshold, so it never starts a contact and never hides a touch.
 *      While a pad moves, its rest follows the low-passed deviation (the
 *      newest six samples weighted 1 2 3 3 2 1, in which a table's 1.35..
 *      3.4 kHz ringing mostly cancels) by at most LP_SLEW counts a sample:
 *      as fast as hum moves, far slower than a hand pushes.
 *   2. ONSET: a contact starts where |d| reaches the pad's threshold
 *      (touch, or slap with touches off). Its onset is back-dated in the
 *      pad's history of the last DETECT_HIST samples: back to the first
 *      sample of the rise, then along the line through the rise's first
 *      two samples to the rest level, never before the last sample at rest:
 *      the moment of contact, whatever the strength or the disc's polarity.
 *      On a moving pad the walk goes back through the samples above half
 *      the ringing's level (the ringing makes the rise's steps uneven).
 *      A push the low-passed deviation found there (step 4), its rise
 *      under way a sample before, began at least DETECT_LP_BACK_US before
 *      the sample that found it (step 23): the low-passed deviation lags
 *      a hand's push by 2.5 samples, and a walk through a ringing stops
 *      at the ringing's first crest. (Not where a contact still in its
 *      scan clipped: its own ringing at the rails is uneven enough to
 *      show the low-passed deviation a push.) The HIT line takes a date
 *      of its own for a contact on a moving pad (step 37): from the
 *      rise's shape, or the sample before the rise.
 *   3. SCAN for scan_us: the peak |d| (estimated when the pad clips at the
 *      ADC's rails), and the first half-wave (lobe): how long until the
 *      signal crosses back through rest. Table vibration is a short sharp
 *      wave (a lobe within DETECT_XT_LOBE_US); a hand's push is longer. A
 *      lobe that turns back and rises again past twice its peak, or whose
 *      rise turns into a step more than twice the one before it (a knee:
 *      a single pulse's steps only shrink), was a shake with a hand landing
 *      on it: the contact starts afresh there. Unless the lobe before the
 *      turn was a slap's that rose more slowly than a shake (step 26): then
 *      it was a slow hand's, the new rise a neighbour's shake landing on
 *      it, and the hand's contact goes on with its onset.
 *   4. NEW CONTACT ON A MOVING PAD: while a pad rings (a neighbour's shake,
 *      or its own earlier contact), a new contact starts where the signal
 *      does what the ringing cannot: |d| past the ringing's level plus a
 *      quarter (at least the threshold) and two gates, or the low-passed
 *      deviation past its own level (which follows it up, and decays by
 *      1/32 a sample, 1/8 just after a first half-wave) plus a quarter and
 *      LP_MARGIN counts: a hand's push shows there at its own size, the
 *      ringing at a fifth to a third of it. In a contact's scan, just
 *      after its first half-wave, the level follows it up only against a
 *      hand's way (step 30: a hand landing on a pad just shaken rises
 *      slowly under the shake's ringing, and a level that followed it
 *      never saw it pass). With the disc's polarity known
 *      (step 7) only a push its way counts. The |d| level starts at the
 *      first half-wave's peak (at most what the rails let a sample show:
 *      step 17) and decays by 1/32 a sample (1/64 after a
 *      reported contact) at the quiet scan's 148 us: in time, not in
 *      samples (step 16, detect_slow: in a burst's paced scans it decays
 *      as much more a sample as they are longer). A pad is never deaf
 *      after a contact it did not report.
 *   5. DECIDE at onset + the longest scan_us + DETECT_DECIDE_MARGIN_US (every pad that
 *      could have caused the contact has its peak by then). Crosstalk is
 *      cancelled only forward in time: a contact is dropped as a
 *      neighbour's shake only if it is sharp, another pad's contact began
 *      before it (at least DETECT_XT_MIN_DELAY_US, at most xwin_us
 *      earlier; vibration needs time to cross the table; the onsets are
 *      dated to about half a sample, so up to DETECT_XT_EARLY_US after it) and its peak is
 *      at most xtalk % of that one's (clipped against clipped: no longer at
 *      the rails than the source, counted in each pad's own sample gaps
 *      (up to DETECT_XT_CLIP_TOL_US longer for a contact that began within
 *      DETECT_XT_CLIP_NEAR_US of it: step 20), nor than DETECT_XT_CLIP_MAX_US, and a
 *      share of the first half-wave at the rails not much over the
 *      source's, unless that half-wave was one sample or shorter than
 *      CLIP_HAND_LOBE_US: a ringing's half-cycle, no hand's; and a clean
 *      source must have spent enough of its own first half-wave at the
 *      rails to shake anything up to them at xtalk %: 2/3 of it at 50 %; and
 *      no longer at the rails in its scan than the source: step 14, its
 *      samples there each worth the pad's gap, step 21). A
 *      quieter slap that came first (by more than DETECT_XT_EARLY_US) is
 *      never dropped for a louder one that came after it, nor one that
 *      began sooner after it than the table's least delay allows, for a
 *      pair whose own delay is not known yet (step 29: DETECT_FLOOR_PCT %
 *      of the shortest delay known, once DETECT_FLOOR_PAIRS are). A contact that
 *      began longer after another than vibration takes to cross a table
 *      (XT_DELAY_MAX_US) and its first half-wave lasts is that one's shake
 *      only if no louder than the ringing it rose out of. A shake shakes
 *      nothing, but one dropped at the rails (both sizes estimates) may
 *      have been a slap: when no other contact explains one that began
 *      within DETECT_XT_DOUBT_US after it, it may. A contact shakes a
 *      pad once: a later contact there, over half the shake it last had
 *      from that contact (above the ringing it rose out of), is no second
 *      shake of it (step 27).
 *      Sharp is learnt too: a table whose shakes come slower (a soft top,
 *      a low ringing) has them judged by its own shakes' first half-wave
 *      (detect_sharp_us; step 13), never by less than
 *      DETECT_XT_LOBE_US. Nor is a contact on a moving pad a hand's push
 *      for being unsharp when its first half-wave lasted 1.4 ms or more
 *      and it rose no higher than the ringing it rose out of: the
 *      ringing's swell (step 22). Nor is a contact off the rails whose
 *      first half-wave is at most DETECT_OVERLAP_LOBE_US longer than a
 *      sharp one's, when a contact DETECT_OVERLAP_X10 / 10 times as loud
 *      began on another pad just before it: two slaps' shakes overlapping
 *      into one first half-wave (step 28); nor, with no contact that loud,
 *      one in that band under 1.5 times the slap threshold whose largest
 *      sample came at its first half-wave's end, as a shake landing on
 *      another's swing peaks (a hand's push peaks about halfway; step 36).
 *      Nor is a contact whose
 *      low-passed deviation reached a slap's size in its first half-wave
 *      (a share of the slap threshold, grown with the table's learnt
 *      shakes): a hand's push, however short the ringing cut its first
 *      half-wave (step 34).
 *   6. REPORT a slap if the (estimated) peak reaches the slap threshold,
 *      else a touch: a light contact must be a finger's push (began at
 *      rest, a first half-wave of DETECT_TOUCH_LOBE_US or more, over within
 *      the scan), else it is dropped as a knock; so is a contact on a
 *      moving pad whose first half-wave was shorter than
 *      DETECT_HAND_LOBE_MIN_US (the ringing's). MASK: no report for mask_us after a
 *      reported onset unless the peak passes twice the reported one (the
 *      reported one, if that was sharp: step 33) and the contact is a
 *      hand's push, not sharp (step 18: a sharp first half-wave there is
 *      the table's, however loud).
 *   7. LEARN EACH DISC'S POLARITY as the table is played on (the sign of
 *      a hand's first half-wave), from the sure hands' contacts on it
 *      (began at rest, a slap, a first half-wave longer than any shake's;
 *      known once DISC_SURE more went one way than the other): a contact
 *      against it is the table's, never the player's. A fresh box knows
 *      none (nothing is kept across resets) and judges as before.
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
 * counts of deviation from the rest point (4.9 mV a count at the 5 V
 * reference) and microseconds. Since 2.22.0 the wiring has a capacitor
 * across each disc (CP, docs/wiring.md) that divides its signal by ~0.7
 * before the pin, so the thresholds are 0.7 of 2.21.0's 200 / 60: the same
 * contacts at the disc. */
#define DETECT_DEFAULT_SLAP 140u       /* ~690 mV at the pin, ~980 mV at the disc: a deliberate slap */
#define DETECT_DEFAULT_TOUCH 42u       /* ~205 mV at the pin, ~290 mV at the disc: well above noise */
#define DETECT_DEFAULT_SCAN_US 2000u   /* a hand slap peaks 0.2..1 ms after contact */
#define DETECT_DEFAULT_MASK_US 30000ul /* nobody slaps the same pad twice in 30 ms */
/* Percent of the loud peak: 55 since 2.32.0 (70 from 2.22.0, 50 before).
 * Since the front end clips less a shake's size is a truer share of its
 * slap's; 55 % keeps soft players' slaps that came a little after a
 * slightly louder one (firmware/README.md, "Detection", step 5). */
#ifndef DETECT_DEFAULT_XTALK
#define DETECT_DEFAULT_XTALK 55u
#endif
#define DETECT_DEFAULT_XWIN_US 5000ul  /* table vibration arrives within a few ms */

/* Not settable. */
/* Samples of history per pad: the rise of a contact is found in them. */
#define DETECT_HIST 8u /* (a power of two: the code masks with 7) */
/* Decide a contact this long after its scan ends. */
#define DETECT_DECIDE_MARGIN_US 500u
/* Table vibration's first half-wave lasts at most this long, or at most
 * as long as detect_sharp_us() says the table's does (step 13), if longer. */
#ifndef DETECT_XT_LOBE_US
#define DETECT_XT_LOBE_US 480u
#endif
/* Step 22: a first half-wave this long or longer (or not over within the
 * scan), on a moving pad, no higher than the ringing it rose out of, is
 * the ringing's swell, not a hand's push: judged as a shake might be
 * (0xFFFF: step 22 off). */
#ifndef DETECT_SWELL_LOBE_US
#define DETECT_SWELL_LOBE_US 1400u
#endif
/* Step 23: a push the low-passed deviation found on a moving pad, its
 * low-passed deviation already over the rest and rising at the sample
 * before, is dated at least this long before the sample that found it
 * (never later than the walk back dates it; 0: step 23 off). */
#ifndef DETECT_LP_BACK_US
#define DETECT_LP_BACK_US 250u
#endif
/* Step 37: a contact that began on a moving pad is reported at a date of
 * its own, its onset_us left as the rules date it (since 2.36.0): a push
 * step 23 found, 4 - 3.75 x the newest sample's share of its low-passed
 * deviation sample gaps before the sample that found it, at least one
 * (lp_back_us() in detect.c; not within four samples of the end of the
 * first half-wave before it, nor in it); a rise that began at the sample
 * that crossed, at the sample before it or DETECT_MOVING_REPORT_US before
 * the crossing, the nearer, never later than onset_us (date_onset()). 0:
 * reported at onset_us. */
#ifndef DETECT_REPORT_DATE
#define DETECT_REPORT_DATE 1
#endif
#ifndef DETECT_MOVING_REPORT_US
#define DETECT_MOVING_REPORT_US 160u
#endif
/* Step 38: the same report date for a rise that began at the sample that
 * crossed on a pad at rest, when the sample before it was already past the
 * gate (the walk back stopped there at a knee: a neighbour's shake landing
 * on the rise, or the push begun before it), since 2.37.0. 0: such a rise
 * is reported at onset_us, as before. */
#ifndef DETECT_KNEE_REPORT
#define DETECT_KNEE_REPORT 1
#endif
/* Step 26: a first half-wave that reached the slap threshold and peaked
 * later after its onset than half of detect_sharp_us() (a shake peaks
 * sooner), then rose again past twice its peak, was a hand's with a
 * neighbour's shake landing on it: the hand's contact goes on (its
 * half-wave ends there), not afresh from the shake (0: step 26 off). */
#ifndef DETECT_SLOW_RISE_KEEPS
#define DETECT_SLOW_RISE_KEEPS 1
#endif
/* Step 27: a source's contact shakes a pad once. A new contact on that
 * pad, over half the size of the shake it last had from it (above the
 * ringing it rose out of), is no second shake of the same contact (0: as
 * before 2.23.0, only one an eighth louder than that shake). */
#ifndef DETECT_SHAKE_ONCE
#define DETECT_SHAKE_ONCE 1
#endif
/* Step 32 (since 2.27.0): ... but a shake put down at a restart (its peak
 * what it had reached when a rise cut it short) under
 * 1/DETECT_SHAKE_ONCE_RATIO of that contact's estimated peak is not
 * remembered against a new contact off the rails: so small a start was
 * most likely a quieter slap's shake, put down to the louder slap that
 * began about as soon, whose own shake is still to come (0: any size,
 * 2.26.0's). */
#ifndef DETECT_SHAKE_ONCE_RATIO
#define DETECT_SHAKE_ONCE_RATIO 16u
#endif
#define DETECT_XT_AT_RESTART 0x80u /* (xt_pad's flag: its shake was put down at a restart) */
/* Step 28: a first half-wave longer than a shake's (not sharp) but by no
 * more than DETECT_OVERLAP_LOBE_US, off the rails, of a contact that a
 * contact on another pad DETECT_OVERLAP_X10 / 10 times as loud (its
 * estimated peak) began DETECT_XT_EARLY_US to xwin_us before, is judged
 * as a shake may be, not taken for a hand's push at once: the shakes of
 * two or three slaps overlapping make first half-waves of up to ~0.65 ms,
 * and a player's slap that quiet just after one that loud is rare (0: step
 * 28 off). */
#ifndef DETECT_OVERLAP_X10
#define DETECT_OVERLAP_X10 70u
#endif
#ifndef DETECT_OVERLAP_LOBE_US
#define DETECT_OVERLAP_LOBE_US 160u
#endif
/* Step 36: such a first half-wave (off the rails, longer than a shake's
 * by at most DETECT_OVERLAP_LOBE_US) under DETECT_LATE_PEAK_MAX_X2 / 2
 * times the slap threshold whose largest sample came in its last 5/32
 * (from 84 % of it on) is judged as a shake may be, with no louder contact
 * asked for: a hand's push rises for about half its first half-wave (the
 * model's slaps peak at 0.5-0.6 of it), while a shake that lands on the
 * swing of another (or of the pad's own ringing) the same way peaks at the
 * second's crest, near the end (0.7-0.9). A source must still fit it by
 * size and time. A louder contact is left to step 28: there real slaps that
 * peaked late are as many as such shakes (DETECT_LATE_PEAK 0: step 36 off). */
#ifndef DETECT_LATE_PEAK
#define DETECT_LATE_PEAK 1
#endif
#ifndef DETECT_LATE_PEAK_MAX_X2
#define DETECT_LATE_PEAK_MAX_X2 3u /* (1.5 x the slap threshold) */
#endif
/* Step 13: the table's shakes' first half-wave, learnt as the running
 * median of the contacts that are shakes by size and time alone (off the
 * rails, DETECT_SHAKE_LOBE_RATIO times smaller than a contact that began
 * DETECT_XT_EARLY_US to xwin_us before them): it starts at
 * DETECT_SHAKE_LOBE_START_US (the model's ~265 us), moves by
 * DETECT_SHAKE_LOBE_STEP_US a contact, and a shake is sharp within twice
 * it less DETECT_SHAKE_LOBE_LESS_US (detect_sharp_us), never within less
 * than DETECT_XT_LOBE_US: on the model's tables (a median of 250-320 us)
 * that is 480 us. */
#ifndef DETECT_SHAKE_LOBE_START_US
#define DETECT_SHAKE_LOBE_START_US 256u
#endif
#ifndef DETECT_SHAKE_LOBE_STEP_US
#define DETECT_SHAKE_LOBE_STEP_US 16u
#endif
#ifndef DETECT_SHAKE_LOBE_RATIO
#define DETECT_SHAKE_LOBE_RATIO 4u
#endif
#ifndef DETECT_SHAKE_LOBE_LESS_US
#define DETECT_SHAKE_LOBE_LESS_US 120u
#endif
/* A light touch's first half-wave lasts at least this long (a finger's
 * push; overlapping table vibration stays shorter). */
#ifndef DETECT_TOUCH_LOBE_US
#define DETECT_TOUCH_LOBE_US 650u
#endif
/* A shake stays at the rails at most this long: its first half-wave lasts
 * at most ~400 us and it is at most ~45 % of its slap, so it clips for
 * ~300 us at most (measured to a sample: two samples, not three). */
#ifndef DETECT_XT_CLIP_MAX_US
#define DETECT_XT_CLIP_MAX_US 380u
#endif
/* A hand's first half-wave lasts at least this long (the sharpest slap
 * rises in ~150 us); on a moving pad a shorter one is the ringing's. */
#ifndef DETECT_HAND_LOBE_MIN_US
#define DETECT_HAND_LOBE_MIN_US 200u
#endif
/* A shake at the rails longer than this (two samples or more) has a
 * first half-wave of at most DETECT_XT_CLIPPED_LOBE_US: 320 us since
 * 2.22.0 (400 before). Through the capacitor across the disc a shake
 * stays that long at the rails only off a very hard slap, whose shakes
 * are short; a hand there is longer. On the table model's eight seeds
 * (host, the front end's gain 0.7) 6 % fewer slaps dropped on the
 * default files (677 -> 636), 7 % on long tables, 4 % after a warm-up,
 * false slaps +1-3 %; off the model level (548 / 659 -> 543 / 681). */
#ifndef DETECT_XT_CLIP_LONG_US
#define DETECT_XT_CLIP_LONG_US 230u
#endif
#ifndef DETECT_XT_CLIPPED_LOBE_US
#define DETECT_XT_CLIPPED_LOBE_US 320u
#endif
/* Vibration reaches a neighbour no sooner than this after the slap. */
#ifndef DETECT_XT_MIN_DELAY_US
#define DETECT_XT_MIN_DELAY_US 0u
#endif
/* A contact is not another's shake if its scan had more samples at the
 * rails than that contact's had, by more than this: a shake is a fraction
 * of its slap, and rings no longer at the rails. */
#ifndef DETECT_XT_RAILS_MARGIN
#define DETECT_XT_RAILS_MARGIN 0u
#endif
/* A shake clips no longer than the slap that made it, but each pad's time
 * at the rails is counted in its own sample gaps, and in a burst's paced
 * scans two pads' gaps differ by tens of us: a contact that began within
 * DETECT_XT_CLIP_NEAR_US of a clipped source may clip up to this much
 * longer and still be its shake (step 20). Under half a quiet scan's gap:
 * a whole sample more at the rails still tells a hand. */
#ifndef DETECT_XT_CLIP_TOL_US
#define DETECT_XT_CLIP_TOL_US 64u
#endif
#ifndef DETECT_XT_CLIP_NEAR_US
#define DETECT_XT_CLIP_NEAR_US 1500
#endif
/* A contact dropped as a shake at the rails may have been a slap (at the
 * rails, its size and its source's are estimates): it is still a source,
 * when no other contact is, for the contacts that began up to this long
 * after it. */
#ifndef DETECT_XT_DOUBT_US
#define DETECT_XT_DOUBT_US 1000
#endif
/* A shake's onset may come out dated up to this much before its source's
 * (each is dated to about half a sample gap), and still be its shake. */
#ifndef DETECT_XT_EARLY_US
#define DETECT_XT_EARLY_US 80u
#endif
/* A contact is not a slap's shake if it is more than DETECT_XT_NEARER_X10
 * / 10 times as large (plus the pad's threshold) as a shake that slap
 * surely made on a pad it reached DETECT_XT_NEARER_US sooner: vibration
 * weakens as it travels, so a pad it reaches later is farther and shaken
 * less (the margin: pads' mounts differ, and a short shake's peak falls
 * between samples, so a shake's size is its largest swing either way).
 * "Surely": that shake was off the rails and no other contact began in
 * the 3.4 ms before it. Each slap keeps the smallest such shake (its time
 * in DETECT_SHAKE_UNIT_US, its size in counts / 4: two bytes a pad). */
#ifndef DETECT_XT_NEARER_US
#define DETECT_XT_NEARER_US 150
#endif
#define DETECT_SHAKE_UNIT_US 16 /* (a power of two: a shift) */
#ifndef DETECT_XT_NEARER_X10
#define DETECT_XT_NEARER_X10 15u /* (1.5 x since 2.11.0, 2 x before: pads' mounts differ by 1.22 x at most in the model) */
#endif
/* Each pair of pads' vibration delay, learnt from the shakes that only one
 * slap could have made (the table's geometry: fixed while the pads stay
 * put). Kept in units of DETECT_PAIR_UNIT_US (7 bits: up to 4 ms), known
 * once two observations agree within DETECT_PAIR_AGREE units (the smaller
 * is kept; since 2.21.0 each sure observation after moves it a unit toward
 * itself, DETECT_PAIR_MEDIAN). Once known, it stands for the 3 ms
 * any vibration needs (XT_DELAY_MAX_US) in two rules: a contact that began
 * more than DETECT_PAIR_EARLY_US sooner after the other pad's contact than
 * the delay is not that contact's shake (since 2.20.0 on a pad already
 * moving too; DETECT_PAIR_MOVING 0 gives 2.19.0's rule, on a pad at rest
 * only); one that began more than the delay + DETECT_PAIR_LATE_US +
 * XT_LATE_US after it is only its shake if no louder than the ringing it
 * rose out of. A pair not yet known is bounded below through any third pad
 * whose pairs with both are known (since 2.21.0, DETECT_PAIR_BOUND_EARLY_US).
 * Step 25 of firmware/README.md's "Detection". */
#define DETECT_PAIRS (DETECT_MAX_PADS * (DETECT_MAX_PADS - 1) / 2)
#define DETECT_PAIR_UNIT_US 32
#define DETECT_PAIR_KNOWN 0x80u
#ifndef DETECT_PAIR_AGREE
#define DETECT_PAIR_AGREE 8u
#endif
#ifndef DETECT_PAIR_MOVING
#define DETECT_PAIR_MOVING 1
#endif
/* Since 2.21.0 a known pair's delay follows its observations' median, a unit
 * toward each sure one (0: 2.20.0's, the least of them, only ever shortened). */
#ifndef DETECT_PAIR_MEDIAN
#define DETECT_PAIR_MEDIAN 1
#endif
/* Since 2.21.0 a pair not yet known is bounded below through a third pad x
 * whose pairs with both are known (vibration takes at least |delay(a, x) -
 * delay(x, b)|): no contact more than this much sooner than the bound is
 * the other's shake (0: no bound, 2.20.0's). */
#ifndef DETECT_PAIR_BOUND_EARLY_US
#define DETECT_PAIR_BOUND_EARLY_US 300
#endif
/* Since 2.27.0 (step 31) a pair not yet known is bounded above through a
 * third pad x whose pairs with both are known (vibration takes at most
 * delay(a, x) + delay(x, b)): a contact louder than the ringing it rose out
 * of that began more than this much later than the bound is not the
 * other's shake (0: no such bound, 2.26.0's). */
#ifndef DETECT_PAIR_BOUND_LATE_US
#define DETECT_PAIR_BOUND_LATE_US 600
#endif
#ifndef DETECT_PAIR_EARLY_US
#define DETECT_PAIR_EARLY_US 300
#endif
/* Since 2.25.0 (step 29) a pair not yet known is bounded below by the
 * table's least delay: once DETECT_FLOOR_PAIRS pairs are known, vibration
 * between any two pads takes at least DETECT_FLOOR_PCT % of the shortest
 * of their delays (the nearest pads of a table are the most strongly
 * coupled, so theirs are among the first learnt), and a contact that began
 * sooner (less DETECT_XT_EARLY_US) after another is not its shake (0: off). */
#ifndef DETECT_FLOOR_PCT
#define DETECT_FLOOR_PCT 40u
#endif
#ifndef DETECT_FLOOR_PAIRS
#define DETECT_FLOOR_PAIRS 3u
#endif
/* ... and never over this: a contact that began this long after another
 * is past any floor, and is not held up by working it out (a walk over the
 * pair slots; most candidate sources are that far before). */
#ifndef DETECT_FLOOR_MAX_US
#define DETECT_FLOOR_MAX_US 640
#endif
#ifndef DETECT_PAIR_LATE_US
#define DETECT_PAIR_LATE_US 300
#endif
/* The rest of a moving pad follows its low-passed deviation at most this
 * many counts a sample (350 mV of 60 Hz hum moves ~4 a sample at 148 us):
 * a hand's push drags it little. */
#ifndef LP_SLEW
#define LP_SLEW 5
#endif
/* A push: the low-passed deviation past its level plus a quarter and this
 * many counts (x 12, the weights' sum). 10 since 2.22.0 (25 before): at the
 * divided front end a hand's push is 0.7 of its size, and 10 loses fewer
 * slaps than 0.7 x 25 = 18 on the table model (host, eight seeds: 677 / 258
 * / 232 dropped / false / last wrong, against 746 / 216 / 263). Known cost:
 * a hard slap ringing at the rails in a paced burst restarts its contact
 * sooner (test_rails_in_time_in_paced_scans). */
#ifndef LP_MARGIN
#define LP_MARGIN 10
#endif
/* The level decays by 1/32 a sample (~4.7 ms), and by 1/8 for the first
 * LP_FAST_SAMPLES after a first half-wave: its own pulse leaves the filter
 * (six samples long), and a hand landing soon after a neighbour's shake
 * is not hidden under it. */
#ifndef LP_FAST_SAMPLES
#define LP_FAST_SAMPLES 8
#endif
/* Step 30 (since 2.26.0): in a contact's scan, in those samples, the
 * level follows the low-passed deviation up only where it goes against a
 * hand's way (the disc's, else the contact's). 0 turns it off, on the
 * host only (the assembly has it). */
#ifndef LP_HOLD
#define LP_HOLD 1
#endif
/* Step 33 (since 2.27.0): within the mask of a reported contact whose first
 * half-wave was sharp (the table's shape: often a shake no source
 * explained), a hand's push comes through if its estimated peak is over
 * this many times the reported one, not twice (2: 2.26.0's). */
#ifndef DETECT_MASK_AFTER_SHARP_X
#define DETECT_MASK_AFTER_SHARP_X 1u
#endif
#define DETECT_REPORTED_SHARP 0x8000u /* (detect_pad_state_t.reported's flag: that contact was sharp) */
/* Step 34 (since 2.28.0): a contact's low-passed deviation (detect_lp's,
 * over a hand's push at its own size, a shake's ringing at a fifth to a
 * third of it) sizes a push the |d| of its first half-wave may not: on a
 * ringing pad that half-wave is cut short by the ringing, and its peak is
 * measured against a rest the ringing moved. A contact whose low-passed
 * deviation reached DETECT_PUSH_LP_X64 / 64 of the pad's slap threshold
 * in its first half-wave (92: 144 %, 201 counts at the default 140;
 * DETECT_PUSH_LP_CLIPPED_X64 if the half-wave was at the rails, 101: 158
 * %, 220 counts, as a clipped shake carries more through the filter),
 * times the table's shakes' first half-wave over
 * DETECT_SHAKE_LOBE_START_US (step 13: slower shakes carry more of
 * theirs through the filter), is a hand's push, never a shake. 0: off. */
#ifndef DETECT_PUSH_LP_X64
#define DETECT_PUSH_LP_X64 92u
#endif
#ifndef DETECT_PUSH_LP_CLIPPED_X64
#define DETECT_PUSH_LP_CLIPPED_X64 101u
#endif
/* ... at the quiet scan's gap between a pad's samples or longer; at a
 * shorter one as many times more as the gap is shorter (the filter's six
 * samples are a shorter time, and a shake fills more of them). */
#ifndef DETECT_PUSH_LP_GAP_US
#define DETECT_PUSH_LP_GAP_US 148u
#endif
/* ... and on a pad that was moving, a contact off the rails whose first
 * half-wave was longer than a shake's has a peak of at least 1.5 times
 * that low-passed deviation (a push's half-wave fills about two thirds of
 * the filter's six samples). 0: off. */
#ifndef DETECT_PUSH_LP_PEAK
#define DETECT_PUSH_LP_PEAK 1
#endif
/* Units of heavy work a scan (detect_t.work, set by the caller each scan):
 * 3 since 2.3.0 (2 before; with the sampler slowing early and gently in a
 * burst, 3 loses fewer slaps on the image and on the host). */
#ifndef DETECT_WORK_PER_SCAN
#define DETECT_WORK_PER_SCAN 3u
#endif
/* Samples at or beyond these raw readings are at the rails (clipped). */
#define DETECT_CLIP_LO 2u
#define DETECT_CLIP_HI 1021u

/* Settings of at most 1,000,000 (microseconds) in three bytes on the AVR
 * (since 2.30.0: the 16 bytes went to the sample FIFO), four elsewhere. */
#ifdef __AVR__
typedef __uint24 detect_u24_t;
#else
typedef uint32_t detect_u24_t;
#endif

/** Settings of one pad: the SET parameters of the wire protocol. */
typedef struct {
    uint16_t slap;    /* slap threshold, 1..1023: a peak at or above it is a slap */
    uint16_t touch;   /* touch threshold, 0..1023: detection starts here;
                         0 or >= slap turns touches off (detection starts at slap) */
    uint16_t scan_us; /* 0..20000: peak search after the onset */
    uint8_t xtalk;    /* 0..100 %: crosstalk ratio, 0 = off */
    detect_u24_t mask_us; /* 0..1000000: no new contact on the pad after an onset */
    detect_u24_t xwin_us; /* 0..100000: crosstalk window */
} detect_pad_config_t;

/** One reported contact. */
typedef struct {
    uint8_t pad;     /* 0-based here; the wire protocol adds 1 */
    uint8_t is_slap; /* 1 slap, 0 touch */
    uint16_t peak;   /* counts of deviation, 0..1023 (clipped peaks estimated) */
    uint32_t onset_us;
} detect_hit_t;

enum { DETECT_REST = 0, DETECT_SCAN, DETECT_PENDING, DETECT_RING };
/* After a reported contact the ringing's level decays by ref >> this a
 * sample (after a shake faster: detect.c's REF_SHIFT_SHAKE). */
#define DETECT_REF_SHIFT_OWN 6

/** A contact: what the crosstalk decision and the report need. */
typedef struct {
    uint32_t onset_us;
    uint16_t peak;    /* largest deviation its way, counts (estimated if clipped) */
    uint16_t lobe_us; /* first half-wave: onset to the crossing back through rest */
    uint16_t clipped_us; /* how long its first half-wave stayed at the rails */
    uint8_t flags;    /* DETECT_C_* */
    uint8_t rails;    /* samples of its scan at the rails, either way (saturating): how loud it rang */
} detect_contact_t;
#define DETECT_CLIPPED(c) ((c)->clipped_us != 0u)

#define DETECT_C_LIVE 1u   /* a contact (not a glitch, not yet forgotten) */
#define DETECT_C_LOBE 2u   /* its first half-wave is over (lobe_us known) */
#define DETECT_C_XTALK 4u  /* dropped as a neighbour's shake */
#define DETECT_C_DATED 8u  /* its onset is worked out */
#define DETECT_C_PUSH 16u /* its low-passed deviation sized it as a hand's push (step 34): no shake */
#define DETECT_C_CLEAN 32u /* began on a pad at rest (its onset is sure) */
#define DETECT_C_TURNED 64u /* its first half-wave turned back before it was over */
#define DETECT_C_WRONG 128u /* it went against the disc's polarity: no hand's */

/** One sample in a pad's history: its time's low 16 bits, and the sample:
 * on the AVR the conversion's 8 high bits, the FIFO's byte, 3 bytes an
 * entry (since 2.30.0: the 64 bytes went to the sample FIFO); elsewhere
 * the counts, which may have all ten bits (detect_hist_raw() reads either). */
typedef struct {
    uint16_t t;
#ifdef __AVR__
    uint8_t r;
#else
    uint16_t r;
#endif
} detect_hist_t;

/** Per-pad running state (exposed so the sketch can size it statically).
 * What every sample touches comes first: the assembly fast paths reach
 * fields at offsets up to 63 in one instruction (ldd/std), and the
 * assembler refuses a field past that. */
typedef struct {
    uint8_t state;
    uint8_t hist_at;         /* where the next sample goes in hist */
    uint8_t nf;              /* noise floor: |d| stays under it at rest, counts */
    uint8_t tick;            /* moving: samples to the next look after the ringing's level */
    uint8_t ticked;          /* moving: this sample was a tick's (1), and the low-passed deviation showed a push (+4) */
    uint8_t learn;           /* samples still to learn the rest from (after detect_init): no contact yet */
    int8_t disc;             /* the disc's polarity: the sign of a hand's first half-wave (0: not known yet) */
    int8_t disc_votes;       /* what the pad's sure contacts said of it (+: positive) */
    int16_t base_q4;         /* predicted rest for the next sample, counts x 16 (-1: no sample yet) */
    int16_t slope_q8;        /* rest's change per sample, counts x 256 */
    uint16_t s4[2];          /* moving: the sums of four samples ending at the newest and at the one before */
    uint16_t lvl_a;          /* moving: |d| past this may be a new contact (the slow path looks) */
    uint16_t lp_ref;         /* moving: the level of the low-passed deviation (x 12): past it, a push */
    uint16_t thr;            /* the pad's start threshold (a copy for the fast path) */
    uint16_t until_lo;       /* SCAN: the scan's end; PENDING: the decision's time (low 16 bits: within 65 ms) */
    int8_t pol;              /* the contact's direction: sign of its first half-wave */
    uint8_t above;           /* SCAN: samples at or above the threshold (saturating) */
    uint8_t since_lobe;      /* samples since the first half-wave ended (saturating) */
    uint8_t busy;            /* REST: samples in a row just over the gate; SCAN: how far back the
                                rise began, until its onset is dated */
    uint16_t env;            /* SCAN, PENDING: largest |d| of the contact so far */
    uint16_t tick_max;       /* moving: largest |d| since the last tick */
    uint16_t last_tick_max;  /* moving: and in the tick before */
    detect_contact_t c;      /* the current (or last) contact */
    int16_t last_pd;         /* SCAN: the previous sample's deviation the contact's way */
    uint16_t last_t;         /* ... and its time */
    uint8_t lobe_gap4;       /* the time between the samples either side of the first half-wave's end,
                                in 4 us (at most 1020 us: lobe_gap_us()) */
    uint16_t ref;            /* after a first half-wave: the |d| its ringing stays under (decays) */
    uint8_t ref_shift;       /* ref decays by ref >> ref_shift a sample */
    detect_hist_t hist[DETECT_HIST]; /* the last samples and their times (indexed: their offset may pass 63) */
    uint8_t xt_pad;          /* the source of the last shake on this pad (0xFF: none; | DETECT_XT_AT_RESTART:
                                put down at a restart, step 32)... */
    uint16_t xt_onset_lo;    /* ... its onset (low 16 bits) ... */
    uint16_t xt_peak;        /* ... and how hard it shook it: its ringing is never louder */
    uint16_t reported;       /* peak of the last reported contact (mask escape; | DETECT_REPORTED_SHARP: it was sharp) */
    uint16_t under;          /* the contact began on a moving pad: the ringing level it rose out of */
    uint32_t mask_end_us;    /* no report before this (the last reported onset + mask_us) */
    uint8_t shake_gap;       /* the smallest shake this contact surely made on another pad: it began
                                (shake_gap - 1) x DETECT_SHAKE_UNIT_US after it (0: none yet)... */
    uint8_t shake_size;      /* ... and its largest swing either way, counts / 4 */
    uint8_t marks;     /* one byte for two steps' marks of the contact (the RAM is nearly all used):
                          DETECT_M_LATE_PEAK, step 36: its first half-wave (just over a shake's, off
                          the rails, under DETECT_LATE_PEAK_MAX_X2 / 2 x slap) peaked in its last
                          5/32, set at its end (note_late_peak); bits 1..7, step 37: its report is
                          dated this many 16 us after onset_us (signed; report_later()) */
} detect_pad_state_t;
#define DETECT_M_LATE_PEAK 1u

/** The whole detector: settings plus state of every pad. */
typedef struct detect {
    uint8_t npads;
    detect_pad_config_t pad[DETECT_MAX_PADS];
    detect_pad_state_t st[DETECT_MAX_PADS];
    uint8_t pair_delay[DETECT_PAIRS]; /* each pair's vibration delay (detect_pair_delay; 0: none yet) */
#ifdef DETECT_ORACLE
    int32_t oracle_delay[DETECT_MAX_PADS][DETECT_MAX_PADS]; /* an experiment's: the table's true delays (0: none) */
    uint16_t oracle_coupling[DETECT_MAX_PADS][DETECT_MAX_PADS]; /* ... and couplings (shake / slap, x 1000; 0: none) */
#endif
    uint16_t dropped_xtalk;        /* contacts dropped as crosstalk since init */
    uint16_t dropped_glitch;       /* contacts dropped as too short (glitches) */
    uint8_t scan;                  /* scans so far (mod 256: counted at pad 0's sample) */
    uint8_t work;                  /* units of heavy work still allowed now (0xFF: no limit):
                                      a contact's start, a look for a
                                      shake's source, a decision; the firmware allows
                                      DETECT_WORK_PER_SCAN a scan */
    uint16_t max_scan_us;          /* the longest pad[].scan_us (cached: every contact's decision
                                      time needs it) */
    uint8_t doubted;               /* a bit a pad: its contact was dropped as a shake at the rails,
                                      and may have been a slap (DETECT_XT_DOUBT_US) */
    uint8_t shake_lobe8;           /* the table's shakes' first half-wave, learnt (x 8 us; step 13) */
} detect_t;

/** The factory settings of one pad. */
void detect_default_config(detect_pad_config_t *cfg);

/** How long a first half-wave may last and be a shake's (sharp, step 5):
 * DETECT_XT_LOBE_US, or longer on a table whose shakes come slower (step 13). */
uint16_t detect_sharp_us(const detect_t *d);

/** The level at which a contact starts on a pad with these settings. */
uint16_t detect_start_threshold(const detect_pad_config_t *cfg);

/** Factory settings for npads pads (clamped to 1..DETECT_MAX_PADS), no contacts. */
void detect_init(detect_t *d, uint8_t npads);

/** Call after changing any d->pad[] setting: refreshes the cached values. */
void detect_settings_changed(detect_t *d);

/** The vibration delay between pads a and b (0-based) learnt so far, in µs
 * (0: not known yet). */
uint16_t detect_pair_delay(const detect_t *d, uint8_t a, uint8_t b);

/** Forget every contact in progress (the rest points and noise floors stay learnt). */
void detect_reset_state(detect_t *d);

/** The common sample, in a function of its own that needs no saved
 * registers: a pad at rest whose sample stays within its gate, the rest
 * tracker and the noise floor, in a few 16-bit operations (the sample goes
 * into the history). 1: done; 0: detect_step() must finish the sample. */
uint8_t detect_sample_fast(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/** The same for a ringing pad (RING, PENDING): into the history, and a
 * sample that shows nothing new in a few 16-bit operations. (The host's;
 * on the AVR detect_sample_quick's assembly does it, with detect_lp.) */
uint8_t detect_sample_ringing(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/** The same for a pad in a contact's scan (SCAN). */
uint8_t detect_sample_scan(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/** A moving pad's work every RING_TICK samples: its ringing's level decays. */
void detect_tick(detect_pad_state_t *s);

/** A moving pad's low-passed deviation (the newest six samples weighted
 * 1 2 3 3 2 1: a table's 1.35..3.4 kHz ringing mostly cancels in it, a
 * hand's push does not): the rest follows it, slowly; 4 if it shows a push
 * the ringing cannot explain (a new contact, maybe), else 0. Called with
 * each sample of a moving pad before it goes into the history. */
uint8_t detect_lp(detect_pad_state_t *s, uint16_t raw);

/** Everything else of a sample (contacts, a moving pad). */
void detect_step(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us);

/** A sample's common work, whatever the pad's state (s is the pad's): the
 * fast path of its state (above), a moving pad's tick every RING_TICK
 * samples and its low-passed deviation (detect_lp). 1: done; 0: detect_step() must finish the
 * sample. (In assembly on the AVR, like the fast paths: detect.c.) */
uint8_t detect_sample_quick(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/* Step 16: the ringing's level decays in time, not in samples. It decays
 * by a fixed share every RING_TICK samples of a pad, set for the quiet
 * scan of 148 us; while the sampler is paced in a burst (up to ~300 us a
 * scan, "Pacing" in firmware/README.md) it would decay half as fast in
 * time, and a shaken pad's level would stay over the slap that comes a few
 * ms later. So the loop tells the core at each scan's start how slow the
 * scan is (detect_slow = detect_slowness(the scan's period, us)): from
 * DETECT_SLOW_SCAN_US a scan the level decays 1.5 times as much a tick,
 * from DETECT_SLOWER_SCAN_US twice (the period at which each matches the
 * quiet scan's decay in time is 230 and 319 us; the bounds are halfway
 * between, in ratio). */
#ifndef DETECT_SLOW_SCAN_US
#define DETECT_SLOW_SCAN_US 184u
#endif
#ifndef DETECT_SLOWER_SCAN_US
#define DETECT_SLOWER_SCAN_US 272u
#endif
/** A sample kept as a conversion's 8 high bits (the image's FIFO keeps
 * ADCH, left adjusted, since 2.18.0; the host's copy takes its samples so
 * too) as counts of the 10-bit scale the detection works in: the middle
 * of the four it stands for. The ADC at 1 MHz has about 9 effective bits;
 * the two low bits are below its noise (on the bench's eight seeds, the
 * host's core on such samples: 655 / 317 / 245 against 653 / 317 / 250). */
static inline uint16_t detect_raw8(uint8_t b) { return (uint16_t)((uint16_t)b << 2) | 2u; }
/** A history entry's sample, in counts (on the AVR samples are always
 * detect_raw8()'s: the entry keeps its byte, and nothing is lost). */
static inline uint16_t detect_hist_raw(const detect_hist_t *h) {
#ifdef __AVR__
    return detect_raw8(h->r);
#else
    return h->r;
#endif
}
/** The sample `age` samples back in s's history (1: the newest), in counts. */
static inline uint16_t detect_hist_raw_back(const detect_pad_state_t *s, uint8_t age) {
    return detect_hist_raw(&s->hist[(uint8_t)(s->hist_at - age) & (DETECT_HIST - 1u)]);
}
/** Put a sample (counts) into a history entry. */
static inline void detect_hist_put(detect_hist_t *h, uint16_t raw, uint16_t t_lo) {
    h->t = t_lo;
#ifdef __AVR__
    h->r = (uint8_t)(raw >> 2);
#else
    h->r = raw;
#endif
}
/** How slow a scan of period scan_us is, for detect_slow: 0, 1 or 2. */
static inline uint8_t detect_slowness(uint16_t scan_us) {
    return (uint8_t)((scan_us >= DETECT_SLOW_SCAN_US) + (scan_us >= DETECT_SLOWER_SCAN_US));
}
/** The scan in progress's detect_slowness(); 0 (a quiet scan's) unless set. */
extern uint8_t detect_slow;

/** Called as a unit of heavy work is about to be taken, before the work,
 * and as the heaviest work goes on (before each candidate a look for a
 * shake's source weighs): weak functions that do nothing; the firmware's
 * own pace its sampler. detect_work_taken() returns 1 to take the unit, 0
 * to hold it back: the scan then takes no more heavy work, and what asked
 * for it tries again at its pad's next sample, as when the scan's budget
 * is spent (the host's takes every unit; the firmware's holds units back
 * near its sample FIFO's end until the brake it asked for has come in,
 * since 2.34.0). */
uint8_t detect_work_taken(void);
void detect_work_goes_on(void);

/** Step 19: whether the sample at t_us of a pad (s) is left out. A pad
 * that reported a contact and still rings from it is followed every other
 * scan (its samples of the odd ones left out) until its mask ends:
 * nothing it does there is reported but a hand's push twice as loud
 * (step 18), which half the samples find, and in a burst the cycles go to
 * the pads whose contacts are still starting. A sample left out still
 * goes into the history and the low-passed deviation's sums
 * (detect_skip_sample()): the rest follows the ringing's low-passed
 * deviation at every sample, never a ringing sampled at half the rate,
 * whose aliases it would follow. (The scan loop's assembly in padbox.ino
 * does the same; the mask's end is compared with the sample's whole
 * time.) */
static inline uint8_t detect_skips(const detect_t *d, const detect_pad_state_t *s, uint32_t t_us) {
    return (d->scan & 1u) && s->state == DETECT_RING && s->ref_shift == DETECT_REF_SHIFT_OWN &&
           (int32_t)(t_us - s->mask_end_us) < 0;
}

/** A sample step 19 leaves out: into the pad's history and the four-sums. */
void detect_skip_sample(detect_pad_state_t *s, uint16_t raw, uint16_t t_lo);

/** Feed one raw ADC sample (0..1023) of pad (s == &d->st[pad], pad < d->npads),
 * taken at device time t_us. */
static inline void detect_sample_at(detect_t *d, detect_pad_state_t *s, uint8_t pad, uint16_t raw, uint32_t t_us) {
    if (pad == 0) d->scan++; /* (a new scan: the moving pads' ticks are spread over them) */
    if (detect_skips(d, s, t_us)) detect_skip_sample(s, raw, (uint16_t)t_us);
    else if (!detect_sample_quick(s, raw, (uint16_t)t_us)) detect_step(d, s, pad, raw, t_us);
}

/** Feed one sample of one pad (0-based), taken at device time t_us. */
static inline void detect_sample(detect_t *d, uint8_t pad, uint16_t raw, uint32_t t_us) {
    if (pad >= d->npads) return;
    detect_sample_at(d, &d->st[pad], pad, raw, t_us);
}

/** The deviation of a raw sample from the pad's rest point, as a level (|d|). */
uint16_t detect_level(const detect_t *d, uint8_t pad, uint16_t raw);

/**
 * Finish contacts whose decision time has come at now_us; write up to max
 * of them to out, oldest onset first; return how many. Call at least once
 * per scan, with now_us no earlier than the last sample time.
 */
uint8_t detect_poll(detect_t *d, uint32_t now_us, detect_hit_t *out, uint8_t max);

/**
 * The same for one pad (0-based): 1 and *out filled if it has a contact to
 * report now. The firmware spreads these calls over the scan, one pad per
 * sample slot; the order pads are decided in does not change any decision.
 */
uint8_t detect_poll_pad_slow(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out);

/** detect_poll_pad() for a caller that holds the pad's state (s == &d->st[pad], pad < d->npads). */
static inline uint8_t detect_poll_at(detect_t *d, const detect_pad_state_t *s, uint8_t pad, uint32_t now_us,
                                     detect_hit_t *out) {
    if (s->state != DETECT_PENDING) return 0; /* the common case */
    if ((int16_t)((uint16_t)now_us - s->until_lo) < 0) return 0;
    return detect_poll_pad_slow(d, pad, now_us, out);
}

static inline uint8_t detect_poll_pad(detect_t *d, uint8_t pad, uint32_t now_us, detect_hit_t *out) {
    if (pad >= d->npads) return 0;
    return detect_poll_at(d, &d->st[pad], pad, now_us, out);
}

#ifdef __cplusplus
}
#endif

#endif
