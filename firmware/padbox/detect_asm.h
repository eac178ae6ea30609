/*
 * detect_asm.h - pieces of the detection core's AVR assembly (detect.c)
 * that the pad box's scan loop (padbox.ino) also runs inline: the same
 * text in both, so that tests/firmware/test_firmware_fastpath.py, which
 * checks detect.c's functions against their C versions byte for byte,
 * checks the loop's copies too. Only included on the AVR.
 *
 * Register use, as in avr-gcc's calls: Z (r30:r31) = the pad's state s,
 * r22:r23 = the raw sample, r20:r21 = its time's low 16 bits; r18..r27
 * and r0 are free to use, r1 is zero.
 */
#ifndef PADBOX_DETECT_ASM_H
#define PADBOX_DETECT_ASM_H

#include <stddef.h>

#include "detect.h"

/* Constants of detect.c the pieces need (detect.c checks they agree). */
#define DETECT_ASM_GATE_MARGIN 4

/* Into the history: hist_r[at] = raw, hist_t[at] = t_lo, at one on (X on the way). */
#define ASM_PUSH_SAMPLE                                                                                       \
    "ldd r26, Z+%[at]\n\t"                                                                                   \
    "mov r27, r26\n\t"                                                                                       \
    "inc r27\n\t"                                                                                            \
    "andi r27, %[hmask]\n\t"                                                                                 \
    "std Z+%[at], r27\n\t"                                                                                   \
    "lsl r26\n\t"                                                                                            \
    "clr r27\n\t"                                                                                            \
    "add r26, r30\n\t"                                                                                       \
    "adc r27, r31\n\t"                                                                                       \
    "subi r26, lo8(-(%[hist_r]))\n\t"                                                                        \
    "sbci r27, hi8(-(%[hist_r]))\n\t"                                                                        \
    "st X+, r22\n\t"                                                                                         \
    "st X, r23\n\t"                                                                                          \
    "adiw r26, %[r_to_t]\n\t"                                                                                \
    "st X+, r20\n\t"                                                                                         \
    "st X, r21\n\t"
#define ASM_PUSH_OPERANDS                                                                                     \
    [at] "n"(offsetof(detect_pad_state_t, hist_at)), [hmask] "M"(DETECT_HIST - 1u),                           \
        [hist_r] "n"(offsetof(detect_pad_state_t, hist_r)),                                                   \
        [r_to_t] "n"(offsetof(detect_pad_state_t, hist_t) - offsetof(detect_pad_state_t, hist_r) - 1u)

/* The raw sample in the pair lo:hi becomes its level |raw - ((base + 8) >> 4)|
 * (base in r18:r19, r24:r25 on the way). */
#define ASM_LEVEL(lo, hi)                                                                                     \
    "movw r24, r18\n\t"                                                                                      \
    "adiw r24, 8\n\t"                                                                                        \
    "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t"                                                  \
    "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t"                                                  \
    "sub " lo ", r24\n\t"                                                                                    \
    "sbc " hi ", r25\n\t"                                                                                    \
    "sbrs " hi ", 7\n\t"                                                                                     \
    "rjmp 1f\n\t"                                                                                            \
    "com " hi "\n\t"                                                                                         \
    "neg " lo "\n\t"                                                                                         \
    "sbci " hi ", 0xFF\n"                                                                                     \
    "1:\n\t"

/* base_q4 += slope_q8 >> 4 (the rest on along its slope; base in
 * r18:r19), r20:r21 on the way. */
#define ASM_REST_ON                                                                                           \
    "ldd r20, Z+%[slope]\n\t"                                                                                \
    "ldd r21, Z+%[slope]+1\n\t"                                                                              \
    "asr r21\n\t" "ror r20\n\t" "asr r21\n\t" "ror r20\n\t"                                                  \
    "asr r21\n\t" "ror r20\n\t" "asr r21\n\t" "ror r20\n\t"                                                  \
    "add r18, r20\n\t"                                                                                       \
    "adc r19, r21\n\t"                                                                                       \
    "std Z+%[base], r18\n\t"                                                                                 \
    "std Z+%[base]+1, r19\n\t"

/* A moving pad's sample before its state's path (detect_sample_quick's
 * C, past its first line; r18 = the state, not REST): acc += raw, and
 * every RING_TICK samples a tick (ticked 1, or 3 if it saw a push; else
 * 0). tick_call: detect_tick(s) with Z = s (which it keeps), raw and t_lo
 * back in their registers after it, and the state in r18 again; ticked:
 * where a tick's sample goes on (its state in r18). scan: code that
 * leaves for the SCAN state's path; after it, a sample with no tick goes
 * on (RING, PENDING). */
#define ASM_QUICK_MOVING(tick_call, ticked, scan)                                                             \
    "ldd r24, Z+%[acc]\n\t"                                                                                  \
    "ldd r25, Z+%[acc]+1\n\t"                                                                                \
    "add r24, r22\n\t"                                                                                       \
    "adc r25, r23\n\t"                                                                                       \
    "std Z+%[acc], r24\n\t"                                                                                  \
    "std Z+%[acc]+1, r25\n\t"                                                                                \
    "ldd r24, Z+%[tick]\n\t"                                                                                 \
    "dec r24\n\t"                                                                                            \
    "std Z+%[tick], r24\n\t"                                                                                 \
    "brne 61f\n\t"                                                                                           \
    tick_call                                                                                                \
    "ori r24, 1\n\t"                                                                                         \
    "std Z+%[ticked], r24\n\t"                                                                               \
    ticked                                                                                                   \
    "61:\n\t"                                                                                                \
    "std Z+%[ticked], __zero_reg__\n\t"                                                                      \
    "cpi r18, %[scan_state]\n\t"                                                                             \
    "brne 63f\n\t"                                                                                           \
    scan                                                                                                     \
    "63:\n\t"
#define ASM_QUICK_OPERANDS                                                                                    \
    [acc] "n"(offsetof(detect_pad_state_t, acc)), [tick] "n"(offsetof(detect_pad_state_t, tick)),             \
        [ticked] "n"(offsetof(detect_pad_state_t, ticked)), [scan_state] "M"(DETECT_SCAN)

/* detect_sample_ringing's body (RING, PENDING), past its first
 * instruction (Z = s), in three parts: into the history; the tick's
 * sample tested (ticked: 2 or more, the 4-sum saw a push: the slow path;
 * else its bit 0 into T); the rest. A sample with no tick can skip the
 * test with T clear (ticked is 0). done and slow are where it ends, with
 * nothing in r24 (the function puts its 1 or 0 there). */
#define ASM_RINGING_HEAD                                                                                      \
    "ldd r18, Z+%[base]\n\t"                                                                                 \
    "ldd r19, Z+%[base]+1\n\t"                                                                               \
    ASM_PUSH_SAMPLE
#define ASM_RINGING_TICKED                                                                                    \
    "ldd r24, Z+%[ticked]\n\t"                                                                               \
    "cpi r24, 2\n\t"                                                                                         \
    "brsh 78f\n\t"                                                                                           \
    "bst r24, 0\n\t"
#define ASM_RINGING_TAIL(done, slow)                                                                          \
    ASM_LEVEL("r22", "r23") /* a in r22:r23 */                                                               \
    /* a past the ringing's level: the slow path */                                                          \
    "ldd r24, Z+%[lvl_a]\n\t"                                                                                \
    "ldd r25, Z+%[lvl_a]+1\n\t"                                                                              \
    "cp r24, r22\n\t"                                                                                        \
    "cpc r25, r23\n\t"                                                                                       \
    "brlo 78f\n\t"                                                                                           \
    "brtc 72f\n\t"                                                                                           \
    /* a tick's sample: a ringing pad whose level is under two gates may be back at rest */                  \
    "ldd r25, Z+%[state]\n\t"                                                                                \
    "cpi r25, %[ring]\n\t"                                                                                   \
    "brne 73f\n\t"                                                                                           \
    "ldd r24, Z+%[nf]\n\t"                                                                                   \
    "clr r25\n\t"                                                                                            \
    "adiw r24, %[margin]\n\t"                                                                                \
    "lsl r24\n\t"                                                                                            \
    "rol r25\n\t"                                                                                            \
    "ldd r20, Z+%[ref]\n\t"                                                                                  \
    "ldd r21, Z+%[ref]+1\n\t"                                                                                \
    "cp r20, r24\n\t"                                                                                        \
    "cpc r21, r25\n\t"                                                                                       \
    "brlo 78f\n\t"                                                                                           \
    "rjmp 73f\n"                                                                                             \
    "72:\n\t"                                                                                                \
    ASM_REST_ON                                                                                              \
    "73:\n\t"                                                                                                \
    /* the largest level since the tick */                                                                   \
    "ldd r24, Z+%[tick_max]\n\t"                                                                             \
    "ldd r25, Z+%[tick_max]+1\n\t"                                                                           \
    "cp r24, r22\n\t"                                                                                        \
    "cpc r25, r23\n\t"                                                                                       \
    "brsh 74f\n\t"                                                                                           \
    "std Z+%[tick_max], r22\n\t"                                                                             \
    "std Z+%[tick_max]+1, r23\n"                                                                             \
    "74:\n\t"                                                                                                \
    done                                                                                                     \
    "78:\n\t"                                                                                                \
    slow
#define ASM_RINGING_OPERANDS                                                                                  \
    [base] "n"(offsetof(detect_pad_state_t, base_q4)), ASM_PUSH_OPERANDS,                                     \
        [lvl_a] "n"(offsetof(detect_pad_state_t, lvl_a)), [state] "n"(offsetof(detect_pad_state_t, state)),   \
        [ring] "M"(DETECT_RING), [nf] "n"(offsetof(detect_pad_state_t, nf)), [margin] "n"(DETECT_ASM_GATE_MARGIN), \
        [ref] "n"(offsetof(detect_pad_state_t, ref)), [slope] "n"(offsetof(detect_pad_state_t, slope_q8)),    \
        [tick_max] "n"(offsetof(detect_pad_state_t, tick_max))

#endif
