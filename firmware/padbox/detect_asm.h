/*
 * detect_asm.h - pieces of the detection core's AVR assembly (detect.c)
 * that the pad box's scan loop (padbox.ino) also runs inline: the same
 * text in both, so that tests/firmware/test_firmware_fastpath.py, which
 * checks detect.c's functions against their C versions byte for byte,
 * checks the loop's copies too. Only included on the AVR.
 *
 * Register use, as in avr-gcc's calls: Z (r30:r31) = the pad's state s,
 * r22:r23 = the raw sample, r20:r21 = its time's low 16 bits; r18..r27
 * and r0 are free to use, r1 is zero (the pieces clear it again after a
 * mul). Local labels: 1..6, 60..79 and 89.
 */
#ifndef PADBOX_DETECT_ASM_H
#define PADBOX_DETECT_ASM_H

#include <stddef.h>

#include "detect.h"

/* Constants of detect.c the pieces need (detect.c checks they agree). */
#define DETECT_ASM_GATE_MARGIN 4
/* offsetof(pol) - offsetof(disc) in detect_pad_state_t on the AVR: an
 * asm has at most 30 operands and ASM_QUICK_OPERANDS has them all, so the
 * contact's way (step 30) is reached from disc's. */
#define DETECT_ASM_POL_FROM_DISC 18
#define DETECT_ASM_STR_(x) #x
#define DETECT_ASM_STR(x) DETECT_ASM_STR_(x)

/* X = &s->hist[r26] (Z = s; r26 the index, r27 on the way; an entry is
 * 3 bytes: the time's low 16 bits, then the sample's byte). */
#define ASM_X_AT_HIST                                                                                        \
    "mov r27, r26\n\t"                                                                                       \
    "lsl r26\n\t"                                                                                            \
    "add r26, r27\n\t"                                                                                       \
    "clr r27\n\t"                                                                                            \
    "add r26, r30\n\t"                                                                                       \
    "adc r27, r31\n\t"                                                                                       \
    "subi r26, lo8(-(%[hist]))\n\t"                                                                          \
    "sbci r27, hi8(-(%[hist]))\n\t"

/* The sample's byte (raw >> 2: raw is detect_raw8()'s) into r24, r0 on the way. */
#define ASM_RAW_BYTE                                                                                         \
    "mov r0, r23\n\t"                                                                                        \
    "mov r24, r22\n\t"                                                                                       \
    "lsr r0\n\t" "ror r24\n\t" "lsr r0\n\t" "ror r24\n\t"

/* The history's entry at X (ASM_X_AT_HIST) = {t_lo, raw's byte}; X left
 * on its byte (r0 and r24 on the way). */
#define ASM_STORE_ENTRY                                                                                      \
    "st X+, r20\n\t"                                                                                         \
    "st X+, r21\n\t"                                                                                         \
    ASM_RAW_BYTE                                                                                             \
    "st X, r24\n\t"

/* A tick's sample of a ringing pad (not PENDING: on to 73) whose level
 * (r20:r21 its ref) is not under two gates stays moving (on from here);
 * under them, it may be back at rest: the caller's branch to 78 (the slow
 * path) follows. r24, r25 on the way. */
#define ASM_RING_AT_REST_CHECK                                                                               \
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
    "cpc r21, r25\n\t"

/* The largest level since the tick (a in r22:r23); label 74 past it. */
#define ASM_TICK_MAX                                                                                         \
    "ldd r24, Z+%[tick_max]\n\t"                                                                             \
    "ldd r25, Z+%[tick_max]+1\n\t"                                                                           \
    "cp r24, r22\n\t"                                                                                        \
    "cpc r25, r23\n\t"                                                                                       \
    "brsh 74f\n\t"                                                                                           \
    "std Z+%[tick_max], r22\n\t"                                                                             \
    "std Z+%[tick_max]+1, r23\n"                                                                             \
    "74:\n\t"

/* The four-sums on by a sample (r24:r25 the sample four before this one,
 * r22:r23 this one); X = the new one + both old ones (weights 1 2 3 3 2 1). */
#define ASM_FOUR_SUMS                                                                                        \
    "ldd r18, Z+%[s4]\n\t"                                                                                   \
    "ldd r19, Z+%[s4]+1\n\t"                                                                                 \
    "movw r26, r18\n\t"                                                                                      \
    "sub r26, r24\n\t"                                                                                       \
    "sbc r27, r25\n\t"                                                                                       \
    "add r26, r22\n\t"                                                                                       \
    "adc r27, r23\n\t"                                                                                       \
    "ldd r24, Z+%[s4]+2\n\t"                                                                                 \
    "ldd r25, Z+%[s4]+3\n\t"                                                                                 \
    "std Z+%[s4], r26\n\t"                                                                                   \
    "std Z+%[s4]+1, r27\n\t"                                                                                 \
    "std Z+%[s4]+2, r18\n\t"                                                                                 \
    "std Z+%[s4]+3, r19\n\t"                                                                                 \
    "add r26, r18\n\t"                                                                                       \
    "adc r27, r19\n\t"                                                                                       \
    "add r26, r24\n\t"                                                                                       \
    "adc r27, r25\n\t"

/* Into the history: hist[at] = {t_lo, raw's byte}, at one on (X, r0 and r24 on the way). */
#define ASM_PUSH_SAMPLE                                                                                      \
    "ldd r26, Z+%[at]\n\t"                                                                                   \
    "mov r27, r26\n\t"                                                                                       \
    "inc r27\n\t"                                                                                            \
    "andi r27, %[hmask]\n\t"                                                                                 \
    "std Z+%[at], r27\n\t"                                                                                   \
    ASM_X_AT_HIST                                                                                            \
    ASM_STORE_ENTRY
#define ASM_PUSH_OPERANDS                                                                                    \
    [at] "n"(offsetof(detect_pad_state_t, hist_at)), [hmask] "M"(DETECT_HIST - 1u),                          \
        [hist] "n"(offsetof(detect_pad_state_t, hist))

/* The raw sample in the pair lo:hi becomes its level |raw - ((base + 8) >> 4)|
 * (base in r18:r19, r24:r25 on the way). */
#define ASM_LEVEL(lo, hi)                                                                                    \
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
    "sbci " hi ", 0xFF\n"                                                                                    \
    "1:\n\t"

/* base_q4 (r18:r19) += slope_q8 (r20:r21) >> 4, stored (the rest on
 * along its slope). */
#define ASM_BASE_ADD_SLOPE                                                                                   \
    "asr r21\n\t" "ror r20\n\t" "asr r21\n\t" "ror r20\n\t"                                                  \
    "asr r21\n\t" "ror r20\n\t" "asr r21\n\t" "ror r20\n\t"                                                  \
    "add r18, r20\n\t"                                                                                       \
    "adc r19, r21\n\t"                                                                                       \
    "std Z+%[base], r18\n\t"                                                                                 \
    "std Z+%[base]+1, r19\n\t"

/* base_q4 += slope_q8 >> 4 (the rest on along its slope; base in
 * r18:r19), r20:r21 on the way. */
#define ASM_REST_ON                                                                                          \
    "ldd r20, Z+%[slope]\n\t"                                                                                \
    "ldd r21, Z+%[slope]+1\n\t"                                                                              \
    ASM_BASE_ADD_SLOPE

#define ASM_LP_OPERANDS                                                                                      \
    [s4] "n"(offsetof(detect_pad_state_t, s4)), [flags] "n"(offsetof(detect_pad_state_t, c.flags)),          \
        [lobe_bit] "I"(__builtin_ctz(DETECT_C_LOBE)), [lp_ref] "n"(offsetof(detect_pad_state_t, lp_ref)),    \
        [disc] "n"(offsetof(detect_pad_state_t, disc)), [ref_shift] "n"(offsetof(detect_pad_state_t, ref_shift)), \
        [own] "M"(DETECT_REF_SHIFT_OWN), [lpm] "n"(12u * LP_MARGIN),                                     \
        [since] "n"(offsetof(detect_pad_state_t, since_lobe)), [fast] "M"(LP_FAST_SAMPLES), [slew] "M"(LP_SLEW)

/* 16 x the rest's step for |lp| in r24 (under DETECT_ASM_SLEW_MAG: a
 * twelfth, (m x 21 + 128) >> 8) into r0, r1 zero again; r20 on the way. */
#define ASM_STEP_X16                                                                                         \
    "ldi r20, 21\n\t"                                                                                        \
    "mul r24, r20\n\t"                                                                                       \
    "sbrc r0, 7\n\t"                                                                                         \
    "inc r1\n\t"                                                                                             \
    "mov r0, r1\n\t"                                                                                         \
    "clr r1\n\t"                                                                                             \
    "swap r0\n\t"

/* The least |lp| whose step is LP_SLEW ((m x 21 + 128) >> 8 >= LP_SLEW
 * from it on): from there the rest moves by 16 x LP_SLEW, no multiply. */
#define DETECT_ASM_SLEW_MAG ((LP_SLEW * 256u - 128u + 20u) / 21u)
#if DETECT_ASM_SLEW_MAG > 255u || LP_SLEW > 15u
#error "detect_asm.h: the step's short cut wants LP_SLEW's bound within a byte and 16 x a step within one too"
#endif

/* detect_tick's body (detect.c's C, step for step; Z = s): within a
 * contact's first half-wave only the tick's count again; else since_lobe
 * on (saturating), the ringing's level down (follow_ring: by ref >> 4 on
 * the pad's own ringing, else ref >> 3, 1.5 or 2 times that in a slow
 * scan (detect_slow), and one more if not 0; up to the
 * crests since the last tick if they reach the threshold) and the level a
 * new contact must pass (set_levels). r18, r19, r24..r27 on the way; the
 * sample's registers (r20..r23), Z and T kept: the scan loop runs it
 * inline, with no call and nothing to fetch again after it. Its operands
 * beyond ASM_LP_OPERANDS and ASM_RINGING_OPERANDS: ASM_TICK_OPERANDS, and
 * tick and scan_state as in ASM_QUICK_OPERANDS. (RING_TICK is 4: detect.c
 * checks.) */
#define ASM_TICK                                                                                             \
    "ldd r24, Z+%[state]\n\t"                                                                                \
    "cpi r24, %[scan_state]\n\t"                                                                             \
    "brne 62f\n\t"                                                                                           \
    "ldd r24, Z+%[flags]\n\t"                                                                                \
    "sbrs r24, %[lobe_bit]\n\t"                                                                              \
    "rjmp 67f\n"                                                                                              \
    "62:\n\t"                                                                                                \
    /* since_lobe + 4, at most 255 (a carry out of the add: below 252) */                                    \
    "ldd r24, Z+%[since]\n\t"                                                                                \
    "subi r24, 0x100 - 4\n\t"                                                                                \
    "brcs 63f\n\t"                                                                                           \
    "ldi r24, 0xFF\n"                                                                                         \
    "63:\n\t"                                                                                                \
    "std Z+%[since], r24\n\t"                                                                                \
    /* ref - (ref >> 4 or >> 3), less 1 if that is not 0 (it is 0 only if ref was) */                       \
    "ldd r24, Z+%[ref]\n\t"                                                                                  \
    "ldd r25, Z+%[ref]+1\n\t"                                                                                \
    "movw r26, r24\n\t"                                                                                      \
    "ldd r18, Z+%[ref_shift]\n\t"                                                                            \
    "cpi r18, %[own]\n\t"                                                                                    \
    "brne 66f\n\t"                                                                                           \
    "lsr r27\n\t" "ror r26\n"                                                                                \
    "66:\n\t"                                                                                                \
    "lsr r27\n\t" "ror r26\n\t" "lsr r27\n\t" "ror r26\n\t" "lsr r27\n\t" "ror r26\n\t"                    \
    /* (in a slow scan 1.5 or 2 times that: detect_slow, step 16) */                                         \
    "lds r18, detect_slow\n\t" /* (by name: the inline asm has all 30 operands it may have) */                \
    "tst r18\n\t"                                                                                            \
    "breq 72f\n\t"                                                                                           \
    "cpi r18, 2\n\t"                                                                                         \
    "movw r18, r26\n\t"                                                                                      \
    "brsh 79f\n\t"                                                                                           \
    "lsr r19\n\t" "ror r18\n"                                                                                \
    "79:\n\t"                                                                                                \
    "add r26, r18\n\t"                                                                                       \
    "adc r27, r19\n"                                                                                          \
    "72:\n\t"                                                                                                \
    "sub r24, r26\n\t"                                                                                       \
    "sbc r25, r27\n\t"                                                                                       \
    "sbiw r24, 1\n\t"                                                                                        \
    "adc r24, __zero_reg__\n\t"                                                                              \
    "adc r25, __zero_reg__\n\t"                                                                              \
    /* up to the crests since the last tick (r26:r27) if they reach the threshold (r18:r19) */               \
    "ldd r26, Z+%[tick_max]\n\t"                                                                             \
    "ldd r27, Z+%[tick_max]+1\n\t"                                                                           \
    "ldd r18, Z+%[thr]\n\t"                                                                                  \
    "ldd r19, Z+%[thr]+1\n\t"                                                                                \
    "cp r24, r26\n\t"                                                                                        \
    "cpc r25, r27\n\t"                                                                                       \
    "brsh 75f\n\t"                                                                                           \
    "cp r26, r18\n\t"                                                                                        \
    "cpc r27, r19\n\t"                                                                                       \
    "brlo 75f\n\t"                                                                                           \
    "movw r24, r26\n"                                                                                         \
    "75:\n\t"                                                                                                \
    "std Z+%[ref], r24\n\t"                                                                                  \
    "std Z+%[ref]+1, r25\n\t"                                                                                \
    "std Z+%[last_tick_max], r26\n\t"                                                                        \
    "std Z+%[last_tick_max]+1, r27\n\t"                                                                      \
    "std Z+%[tick_max], __zero_reg__\n\t"                                                                    \
    "std Z+%[tick_max]+1, __zero_reg__\n\t"                                                                  \
    /* lvl_a = ref + (ref >> 2, at least the threshold) + 2 gates */                                         \
    "movw r26, r24\n\t"                                                                                      \
    "lsr r27\n\t" "ror r26\n\t" "lsr r27\n\t" "ror r26\n\t"                                                  \
    "cp r26, r18\n\t"                                                                                        \
    "cpc r27, r19\n\t"                                                                                       \
    "brsh 76f\n\t"                                                                                           \
    "movw r26, r18\n"                                                                                         \
    "76:\n\t"                                                                                                \
    "add r24, r26\n\t"                                                                                       \
    "adc r25, r27\n\t"                                                                                       \
    "ldd r18, Z+%[nf]\n\t"                                                                                   \
    "ldi r19, 0\n\t"                                                                                         \
    "subi r18, lo8(-(%[margin]))\n\t"                                                                        \
    "sbci r19, hi8(-(%[margin]))\n\t"                                                                        \
    "lsl r18\n\t"                                                                                            \
    "rol r19\n\t"                                                                                            \
    "add r24, r18\n\t"                                                                                       \
    "adc r25, r19\n\t"                                                                                       \
    "std Z+%[lvl_a], r24\n\t"                                                                                \
    "std Z+%[lvl_a]+1, r25\n"                                                                                 \
    "67:\n\t"                                                                                                \
    "ldi r24, 4\n\t"                                                                                         \
    "std Z+%[tick], r24\n\t"
#define ASM_TICK_OPERANDS                                                                                    \
    [thr] "n"(offsetof(detect_pad_state_t, thr)),                                                            \
        [last_tick_max] "n"(offsetof(detect_pad_state_t, last_tick_max))

/* A moving pad's sample (detect_sample_quick's C, past its first line; Z
 * = s, r18 = its state, not at rest; raw and t_lo in r22:r23, r20:r21):
 * every RING_TICK samples a tick, then the low-passed deviation; ticked =
 * 1 for a tick's sample, +4 for a push; then the state's path. tick_call:
 * detect_tick(s) (ASM_TICK), with Z, raw, t_lo and T as they were after it.
 * RING and PENDING go on inline,
 * detect_lp and detect_sample_ringing in one: the sample goes into the
 * history first (neither reads the entry it takes, and the sample four
 * before is found from its place), the rest stays in registers from the
 * low-passed deviation to the ringing's level, and the ringing's "rest on
 * along its slope" is left out (the low-passed deviation has just set the
 * slope to 0). done and slow: where that ends, with nothing in r24 (1 and
 * 0 in the C). SCAN the same up to the low-passed deviation; scan: code
 * that leaves for detect_sample_scan past its push (base in r18:r19, raw
 * in r22:r23) and puts t_lo back in r20:r21 (the rest of the low-passed
 * deviation uses them). Labels 1..6 and 60..79. */
/* Pieces of it: into the history and the four-sums on (all that a sample
 * step 19 leaves out does, in the scan loop: operands ASM_PUSH_OPERANDS
 * and [s4]) ... */
#define ASM_MV_INTO_HIST_S4                                                                                  \
    /* into the history, X on to the sample four before (12 bytes after hist[at]'s byte or before it), its \
     * counts (detect_raw8) in r24:r25 */                                                                    \
    "ldd r25, Z+%[at]\n\t"                                                                                   \
    "mov r24, r25\n\t"                                                                                       \
    "inc r24\n\t"                                                                                            \
    "andi r24, %[hmask]\n\t"                                                                                 \
    "std Z+%[at], r24\n\t"                                                                                   \
    "mov r26, r25\n\t"                                                                                       \
    ASM_X_AT_HIST                                                                                            \
    ASM_STORE_ENTRY                                                                                          \
    "sbiw r26, 12\n\t"                                                                                       \
    "sbrs r25, 2\n\t"                                                                                        \
    "adiw r26, 24\n\t"                                                                                       \
    "ld r24, X\n\t"                                                                                          \
    "clr r25\n\t"                                                                                            \
    "lsl r24\n\t" "rol r25\n\t" "lsl r24\n\t" "rol r25\n\t"                                                  \
    "ori r24, 2\n\t"                                                                                         \
    ASM_FOUR_SUMS
/* ... and lp in X (the rest in r18:r19) ... */
#define ASM_MV_INTO_HIST_LP                                                                                  \
    ASM_MV_INTO_HIST_S4                                                                                      \
    /* lp = that - b + (b >> 2) + (b & 3 == 3) in X (b: base_q4, in r18:r19 from here to the level) */       \
    "ldd r18, Z+%[base]\n\t"                                                                                 \
    "ldd r19, Z+%[base]+1\n\t"                                                                               \
    "sub r26, r18\n\t"                                                                                       \
    "sbc r27, r19\n\t"                                                                                       \
    "movw r24, r18\n\t"                                                                                      \
    "asr r25\n\t" "ror r24\n\t" "asr r25\n\t" "ror r24\n\t" /* (C: b's bit 1 ...) */                         \
    "sbrs r18, 0\n\t"                                                                                        \
    "clc\n\t" /* (... and bit 0) */                                                                          \
    "adc r26, r24\n\t"                                                                                       \
    "adc r27, r25\n\t"                                                                                       \

/* ... the rest moved after it (extra: code after an unconditional jump) ... */
#define ASM_MV_STEP(extra)                                                                                   \
    /* mag = |lp| in r24:r25; the rest 16 x step on lp's way: LP_SLEW from slew_mag up, else (mag x 21 +     \
     * 128) >> 8 (under LP_SLEW there) */                                                                    \
    "movw r24, r26\n\t"                                                                                      \
    "sbrc r27, 7\n\t"                                                                                        \
    "rjmp 64f\n\t"                                                                                           \
    "cpi r24, %[slew_mag]\n\t"                                                                               \
    "cpc r25, __zero_reg__\n\t"                                                                              \
    "brlo 1f\n\t"                                                                                            \
    "subi r18, lo8(-16 * %[slew])\n\t"                                                                       \
    "sbci r19, hi8(-16 * %[slew])\n\t"                                                                       \
    "rjmp 65f\n"                                                                                             \
    extra                                                                                                    \
    "1:\n\t"                                                                                                 \
    ASM_STEP_X16                                                                                             \
    "add r18, r0\n\t"                                                                                        \
    "adc r19, r1\n\t"                                                                                        \
    "rjmp 65f\n"                                                                                             \
    "64:\n\t"                                                                                                \
    "com r25\n\t"                                                                                            \
    "neg r24\n\t"                                                                                            \
    "sbci r25, 0xFF\n\t"                                                                                     \
    "cpi r24, %[slew_mag]\n\t"                                                                               \
    "cpc r25, __zero_reg__\n\t"                                                                              \
    "brlo 1f\n\t"                                                                                            \
    "subi r18, lo8(16 * %[slew])\n\t"                                                                        \
    "sbci r19, hi8(16 * %[slew])\n\t"                                                                        \
    "rjmp 65f\n"                                                                                             \
    "1:\n\t"                                                                                                 \
    ASM_STEP_X16                                                                                             \
    "sub r18, r0\n\t"                                                                                        \
    "sbc r19, r1\n"                                                                                          \
    "65:\n\t"                                                                                                \
    "std Z+%[base], r18\n\t"                                                                                 \
    "std Z+%[base]+1, r19\n\t"                                                                               \
    "std Z+%[slope], r1\n\t"                                                                                 \
    "std Z+%[slope]+1, r1\n\t"                                                                               \

/* dir: mag, or none for a disc against lp (and for lp = -32768 with the disc's way: -lp is that again
 * in 16 bits): no push then (ASM_MV_PUSH_DECAY's gate on a ringing pad) */
#define ASM_MV_DISC_GATE                                                                                     \
    "ldd r0, Z+%[disc]\n\t"                                                                                  \
    "tst r0\n\t"                                                                                             \
    "breq 1f\n\t"                                                                                            \
    "eor r0, r27\n\t"                                                                                        \
    "or r0, r25\n\t"                                                                                         \
    "sbrc r0, 7\n\t"                                                                                         \
    "rjmp 68f\n"                                                                                             \
    "1:\n\t"

/* ... and in a contact's scan after its first half-wave (step 30): the same, and ticked's bit 7 set
 * till the level's decay where lp goes against a hand's way (the disc's, not known: the contact's,
 * pol); ticked is stored again after it */
#define ASM_MV_DISC_GATE_HOLD                                                                                \
    "ldd r0, Z+%[disc]\n\t"                                                                                  \
    "tst r0\n\t"                                                                                             \
    "breq 2f\n\t"                                                                                            \
    "eor r0, r27\n\t"                                                                                        \
    "std Z+%[ticked], r0\n\t"                                                                                \
    "or r0, r25\n\t"                                                                                         \
    "sbrc r0, 7\n\t"                                                                                         \
    "rjmp 68f\n\t"                                                                                           \
    "rjmp 1f\n"                                                                                              \
    "2:\n\t"                                                                                                 \
    "ldd r0, Z+%[disc]+" DETECT_ASM_STR(DETECT_ASM_POL_FROM_DISC) "\n\t"                                     \
    "eor r0, r27\n\t"                                                                                        \
    "std Z+%[ticked], r0\n"                                                                                  \
    "1:\n\t"

/* The fast decay's end (X: lp_ref, r20:r21 its decay): on to the level up to mag (6) ... */
#define ASM_MV_DECAY_ON "rjmp 6f\n"

/* ... or, in a scan after its first half-wave with lp a hand's way (ASM_MV_DISC_GATE_HOLD's bit), the
 * level decays and does not follow it up (step 30): stored (1) */
#define ASM_MV_DECAY_HOLD                                                                                    \
    "ldd r0, Z+%[ticked]\n\t"                                                                                \
    "sbrc r0, 7\n\t"                                                                                         \
    "rjmp 6f\n\t"                                                                                            \
    "sub r26, r20\n\t"                                                                                       \
    "sbc r27, r21\n\t"                                                                                       \
    "rjmp 1f\n"

/* ... a push (lp_ref and ticked stored, then to pushed) or the level's decay (gate: ASM_MV_DISC_GATE or
 * ASM_MV_DISC_GATE_HOLD; fast_end: ASM_MV_DECAY_ON or ASM_MV_DECAY_HOLD). */
#define ASM_MV_PUSH_DECAY(pushed, gate, fast_end)                                                            \
    gate                                                                                                     \
    /* a push (not on a pad's own ringing): dir - 12 LP_MARGIN past ref + ref / 4 (ref: lp_ref, in X; a      \
     * sum past 65535 is none) */                                                                            \
    "ldd r20, Z+%[ref_shift]\n\t"                                                                            \
    "cpi r20, %[own]\n\t"                                                                                    \
    "ldd r26, Z+%[lp_ref]\n\t"                                                                               \
    "ldd r27, Z+%[lp_ref]+1\n\t"                                                                             \
    "breq 3f\n\t"                                                                                            \
    "movw r20, r24\n\t"                                                                                      \
    "subi r20, lo8(%[lpm])\n\t"                                                                              \
    "sbci r21, hi8(%[lpm])\n\t"                                                                              \
    "brcs 3f\n\t"                                                                                            \
    "movw r0, r26\n\t"                                                                                       \
    "lsr r1\n\t" "ror r0\n\t" "lsr r1\n\t" "ror r0\n\t"                                                      \
    "add r0, r26\n\t"                                                                                        \
    "adc r1, r27\n\t"                                                                                        \
    "brcs 4f\n\t"                                                                                            \
    "cp r0, r20\n\t"                                                                                         \
    "cpc r1, r21\n\t"                                                                                        \
    "brsh 4f\n\t"                                                                                            \
    "clr r1\n\t"                                                                                             \
    /* (a push: the slow path, its ticked and level stored) */                                               \
    "std Z+%[lp_ref], r24\n\t"                                                                               \
    "std Z+%[lp_ref]+1, r25\n\t"                                                                             \
    "ldi r24, 4\n\t"                                                                                         \
    "bld r24, 0\n\t"                                                                                         \
    "std Z+%[ticked], r24\n\t"                                                                               \
    "rjmp " pushed "\n"                                                                                      \
    "5:\n\t" /* (the fast decay, out of the common path's way) */                                            \
    "lsr r21\n\t" "ror r20\n\t" "lsr r21\n\t" "ror r20\n\t" "lsr r21\n\t" "ror r20\n\t"                      \
    fast_end                                                                                                 \
    "68:\n\t"                                                                                                \
    "ldd r26, Z+%[lp_ref]\n\t"                                                                               \
    "ldd r27, Z+%[lp_ref]+1\n"                                                                               \
    "4:\n\t"                                                                                                 \
    "clr r1\n"                                                                                               \
    "3:\n\t"                                                                                                 \
    /* else the level decays (by 1/8 for LP_FAST_SAMPLES after a first half-wave, else 1/32: a swap for      \
     * 4 of its 5 shifts), up to mag */                                                                      \
    "ldd r20, Z+%[since]\n\t"                                                                                \
    "cpi r20, %[fast]\n\t"                                                                                   \
    "movw r20, r26\n\t"                                                                                      \
    "brlo 5b\n\t"                                                                                            \
    "swap r20\n\t"                                                                                           \
    "swap r21\n\t"                                                                                           \
    "andi r20, 0x0F\n\t"                                                                                     \
    "eor r20, r21\n\t"                                                                                       \
    "andi r21, 0x0F\n\t"                                                                                     \
    "eor r20, r21\n\t"                                                                                       \
    "lsr r21\n\t" "ror r20\n"                                                                                \
    "6:\n\t"                                                                                                 \
    "sub r26, r20\n\t"                                                                                       \
    "sbc r27, r21\n\t"                                                                                       \
    "cp r26, r24\n\t"                                                                                        \
    "cpc r27, r25\n\t"                                                                                       \
    "brsh 1f\n\t"                                                                                            \
    "movw r26, r24\n"                                                                                        \
    "1:\n\t"                                                                                                 \
    "std Z+%[lp_ref], r26\n\t"                                                                               \
    "std Z+%[lp_ref]+1, r27\n\t"                                                                             \

#define ASM_QUICK_MOVING(tick_call, scan, done, slow)                                                        \
    "ldd r24, Z+%[tick]\n\t"                                                                                 \
    "dec r24\n\t"                                                                                            \
    "std Z+%[tick], r24\n\t"                                                                                 \
    "clt\n\t"                                                                                                \
    "brne 61f\n\t"                                                                                           \
    tick_call                                                                                                \
    "ldd r18, Z+%[state]\n\t"                                                                                \
    "set\n"                                                                                                  \
    "61:\n\t"                                                                                                \
    "cpi r18, %[scan_state]\n\t"                                                                             \
    "brne 69f\n\t" /* (SCAN: 70 is out of a branch's reach, past the history's three-byte entries) */        \
    "rjmp 70f\n"                                                                                             \
    "69:\n\t"                                                                                                \
    ASM_MV_INTO_HIST_LP                                                                                      \
    ASM_MV_STEP("")                                                                                          \
    ASM_MV_PUSH_DECAY("78f", ASM_MV_DISC_GATE, ASM_MV_DECAY_ON)                                              \
    "clr r24\n\t"                                                                                            \
    "bld r24, 0\n\t"                                                                                         \
    "std Z+%[ticked], r24\n\t"                                                                               \
    /* the ringing's path: a (with the rest just moved, still in r18:r19) in r22:r23; past the ringing's     \
     * level: the slow path */                                                                               \
    ASM_LEVEL("r22", "r23")                                                                                  \
    "ldd r24, Z+%[lvl_a]\n\t"                                                                                \
    "ldd r25, Z+%[lvl_a]+1\n\t"                                                                              \
    "cp r24, r22\n\t"                                                                                        \
    "cpc r25, r23\n\t"                                                                                       \
    "brlo 78f\n\t"                                                                                           \
    "brtc 73f\n\t"                                                                                           \
    ASM_RING_AT_REST_CHECK                                                                                   \
    "brlo 78f\n"                                                                                             \
    "73:\n\t"                                                                                                \
    ASM_TICK_MAX                                                                                             \
    done                                                                                                     \
    "78:\n\t"                                                                                                \
    slow                                                                                                     \
    /* SCAN: within a contact's first half-wave the level up to mag, nothing else */                         \
    "70:\n\t"                                                                                                \
    ASM_MV_INTO_HIST_LP                                                                                      \
    "ldd r0, Z+%[flags]\n\t"                                                                                 \
    "sbrc r0, %[lobe_bit]\n\t"                                                                               \
    "rjmp 71f\n\t"                                                                                           \
    "movw r24, r26\n\t"                                                                                      \
    "sbrs r25, 7\n\t"                                                                                        \
    "rjmp 1f\n\t"                                                                                            \
    "com r25\n\t"                                                                                            \
    "neg r24\n\t"                                                                                            \
    "sbci r25, 0xFF\n"                                                                                       \
    "1:\n\t"                                                                                                 \
    "ldd r26, Z+%[lp_ref]\n\t"                                                                               \
    "ldd r27, Z+%[lp_ref]+1\n\t"                                                                             \
    "cp r26, r24\n\t"                                                                                        \
    "cpc r27, r25\n\t"                                                                                       \
    "brsh 1f\n\t"                                                                                            \
    "std Z+%[lp_ref], r24\n\t"                                                                               \
    "std Z+%[lp_ref]+1, r25\n"                                                                               \
    "1:\n\t"                                                                                                 \
    "clr r24\n\t"                                                                                            \
    "bld r24, 0\n\t"                                                                                         \
    "std Z+%[ticked], r24\n\t"                                                                               \
    "rjmp 77f\n"                                                                                             \
    /* after it as RING's (a push: the slow path; detect_sample_scan would leave it too) */                  \
    "71:\n\t"                                                                                                \
    ASM_MV_STEP("")                                                                                          \
    ASM_MV_PUSH_DECAY("78b", ASM_MV_DISC_GATE_HOLD, ASM_MV_DECAY_HOLD)                                       \
    "clr r24\n\t"                                                                                            \
    "bld r24, 0\n\t"                                                                                         \
    "std Z+%[ticked], r24\n\t"                                                                               \
    "77:\n\t"                                                                                                \
    scan
#define ASM_QUICK_OPERANDS                                                                                   \
    [tick] "n"(offsetof(detect_pad_state_t, tick)), [ticked] "n"(offsetof(detect_pad_state_t, ticked)),      \
        [scan_state] "M"(DETECT_SCAN), [slew_mag] "M"(DETECT_ASM_SLEW_MAG), ASM_LP_OPERANDS, ASM_RINGING_OPERANDS, \
        ASM_TICK_OPERANDS /* (30 operands: an asm's most) */

/* The ringing pad's operands (the moving pad's inline path: ASM_QUICK_OPERANDS). */
#define ASM_RINGING_OPERANDS                                                                                 \
    [base] "n"(offsetof(detect_pad_state_t, base_q4)), ASM_PUSH_OPERANDS,                                    \
        [lvl_a] "n"(offsetof(detect_pad_state_t, lvl_a)), [state] "n"(offsetof(detect_pad_state_t, state)),  \
        [ring] "M"(DETECT_RING), [nf] "n"(offsetof(detect_pad_state_t, nf)), [margin] "n"(DETECT_ASM_GATE_MARGIN), \
        [ref] "n"(offsetof(detect_pad_state_t, ref)), [slope] "n"(offsetof(detect_pad_state_t, slope_q8)),   \
        [tick_max] "n"(offsetof(detect_pad_state_t, tick_max))

#endif
