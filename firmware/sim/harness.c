/*
 * harness.c - run the real pad box firmware image (build/padbox.elf) in
 * simavr, an ATmega328P at 16 MHz, with piezo waveforms from a scenario file
 * on its ADC inputs (or button presses on its pins), and capture its UART.
 *
 *   harness [--out FILE] [--report FILE] [--eeprom FILE] [--frontend biased|halfwave] [--pty] [--realtime] ELF SCENARIO
 *
 * Default: run the scenario as fast as simavr goes, UART bytes to --out
 * (default stdout), a key=value report to --report (default stderr):
 *   clock_start_cycle  cycle at which the firmware started its Timer1 clock
 *   scan_cycles_min/median/max  cycles between successive samples of pad 1,
 *                      from the HELLO on (before it the firmware learns its pads)
 *   scan_max_at_us     when the longest scan period ended
 *   scans              how many scan periods were measured
 *   gap_cycles_max     the longest time between two samples of any one pad
 *   gap_max_pad        which pad (1-based) and gap_max_at_us when it ended
 *   sim_us, cycles     simulated time and cycles run
 *   uart_bytes         bytes the firmware sent
 *   stack_min_address  the lowest stack pointer seen (stack high-water mark)
 *   sampler_restarts   times the firmware's sample FIFO overflowed and its
 *                      sampler started afresh (its GPIOR1, saturating at 255)
 *   fifo_peak          the most samples waiting in that FIFO at the end of a
 *                      scan (its GPIOR2: 255 for 255 or more, since 2.29.0's
 *                      FIFO holds 352)
 *   hits, hit_latency_max_us, hit_latency_max_at_us  HIT lines, and the
 *                      longest time from a HIT's onset to its line's last
 *                      byte on the wire (and that onset)
 *
 * The scenario's time 0 is the firmware clock's 0 (the cycle Timer1 starts),
 * so onsets in HIT lines compare directly with the scenario's times.
 *
 * --frontend: overrides the scenario's input circuit (halfwave: the old
 * wiring, for running the previous firmware on the same waveforms).
 *
 * --eeprom FILE: the board's 1 KB EEPROM is loaded from FILE (if it exists)
 * before the run and written back after it, so settings saved in one run
 * are there at the next "power-up".
 *
 * Debugging aids (environment): HARNESS_PROFILE=file writes how many
 * cycles ran at each flash address (an interrupt's entry counts at the
 * instruction it interrupted), only from HARNESS_PROFILE_FROM to _TO (us)
 * if given, and with HARNESS_PROFILE_PACED=1 only while the sampler is
 * slowed down (where the loop falls behind); HARNESS_DUMP=1 prints the UART
 * and Timer1 registers at the end.
 *
 * --pty: the board's UART becomes a pseudo-terminal. The harness prints
 * "PTY <path>" on stdout, waits until a program opens it (like a real
 * Nano, which resets when its port is opened), then runs in real time,
 * forwarding bytes both ways, until the scenario ends and the other side
 * closes the terminal (or SIGTERM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <avr_adc.h>
#include <avr_eeprom.h>
#include <avr_ioport.h>
#include <avr_uart.h>
#include <sim_avr.h>
#include <sim_elf.h>

#include "scenario.h"

#define F_CPU 16000000u
#define CYCLES_PER_US 16u
#define TCCR1B_ADDR 0x81
/* Timer2's compare value: the sampler's period less one tick; 36 on a quiet table (37 ticks,
 * padbox.ino's SAMPLE_TICKS), more while the loop has it slowed down (pacing). */
#define OCR2A_ADDR 0xB3
#define OCR2A_QUIET 36
#define MAX_SCANS 200000

static avr_t *avr;
static scenario_t scn;
static avr_cycle_count_t clock_start; /* cycle Timer1 started: device time 0 */
static int clock_started;
static FILE *uart_out;
static int pty_fd = -1;
static unsigned long uart_bytes;
static avr_cycle_count_t last_ch0;
static int said_hello;                      /* the first line (HELLO) is out */
static avr_cycle_count_t said_hello_cycle;
static int uart_newlines;
static avr_cycle_count_t last_ch[SCN_PADS]; /* last conversion start per pad */
static uint32_t gap_max;                    /* longest gap between two samples of one pad */
static int gap_max_pad;
static double gap_max_at_us;
static uint32_t scan_cycles[MAX_SCANS];
static int nscans;
static uint32_t scan_max;       /* the longest scan period and when it ended */
static double scan_max_at_us;
static volatile sig_atomic_t stop;
static uint16_t sp_min = 0xFFFF;
static uint32_t sp_min_pc;

/* HARNESS_SCANPROF=file: for every scan of pad 1 longer than
 * HARNESS_SCANPROF_CYCLES (default 2400), the flash addresses it ran,
 * "scan <cycles> <end_us>" then "<addr> <count>" lines (hot spots of slow scans). */
/* HARNESS_ADCLOG=file: every conversion, "<channel> <time us>", in order
 * (the host tests can replay the very same samples through detect.c). */
static FILE *adclog;
/* HARNESS_LOSTLOG=file: "<time us> <restarts so far>" whenever the
 * firmware's count of sampler restarts (GPIOR1) moves. */
static FILE *lostlog;
static uint8_t lost_seen;
static FILE *scanprof;
static uint32_t scanprof_min = 2400;
static uint16_t scanprof_pc[16384];
static uint16_t scanprof_hit[16384];
static int scanprof_n;

static void scanprof_end(uint32_t cycles) {
    if (scanprof && cycles >= scanprof_min) {
        fprintf(scanprof, "scan %u\n", cycles);
        for (int i = 0; i < scanprof_n; i++) fprintf(scanprof, "%x %u\n", scanprof_pc[i] * 2, scanprof_hit[scanprof_pc[i]]);
    }
    for (int i = 0; i < scanprof_n; i++) scanprof_hit[scanprof_pc[i]] = 0;
    scanprof_n = 0;
}

static double now_us(void) {
    if (!clock_started) return -1e9; /* before the clock: silence */
    return (double)(avr->cycle - clock_start) / CYCLES_PER_US;
}

/* The firmware started a conversion: put the waveform's voltage at this
 * instant (the sample-and-hold) on that input. */
static void adc_trigger(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    union {
        avr_adc_mux_t mux;
        uint32_t v;
    } e = {.v = value};
    if (e.mux.kind != ADC_MUX_SINGLE || e.mux.src >= SCN_PADS) return;
    int ch = e.mux.src;
    if (ch == 0) {
        /* Scan statistics once the HELLO is out: before that the firmware
         * measures itself, learns its pads' rest points and formats its
         * HELLO (once per power-up). */
        if (last_ch0 && clock_started && said_hello && nscans < MAX_SCANS) {
            uint32_t c = (uint32_t)(avr->cycle - last_ch0);
            scan_cycles[nscans++] = c;
            scanprof_end(c);
            if (c > scan_max) {
                scan_max = c;
                scan_max_at_us = now_us();
            }
        }
        last_ch0 = avr->cycle;
    }
    if (last_ch[ch] && said_hello && last_ch[ch] >= said_hello_cycle) {
        /* Both samples after the start-up (the scan measure and HELLO). */
        uint32_t g = (uint32_t)(avr->cycle - last_ch[ch]);
        if (g > gap_max) {
            gap_max = g;
            gap_max_pad = ch + 1;
            gap_max_at_us = now_us();
        }
    }
    last_ch[ch] = avr->cycle;
    double mv = scn_pad_mv(&scn, ch, now_us());
    if (adclog) fprintf(adclog, "%d %.4f\n", ch, now_us());
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + ch), (uint32_t)mv);
}

/* The line being sent, for the HIT lines' latency (onset to the line's end). */
static char uart_line[96];
static unsigned uart_line_len;
static unsigned long hit_lines;
static double hit_latency_max_us, hit_latency_max_at_us;

static void hit_latency(void) {
    unsigned long seq, t;
    char type[8];
    uart_line[uart_line_len] = 0;
    if (sscanf(uart_line, "%lu %7s %lu", &seq, type, &t) != 3 || strcmp(type, "HIT") != 0) return;
    hit_lines++;
    double late = now_us() - (double)t; /* (device time is the scenario's, within the 71-minute wrap) */
    if (late > hit_latency_max_us) {
        hit_latency_max_us = late;
        hit_latency_max_at_us = (double)t;
    }
}

static void uart_output(struct avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    uint8_t c = (uint8_t)value;
    uart_bytes++;
    if (c == '\n') {
        hit_latency();
        uart_line_len = 0;
    } else if (uart_line_len < sizeof uart_line - 1u) {
        uart_line[uart_line_len++] = (char)c;
    }
    /* The firmware's first byte is an empty line, the HELLO line ends at the second. */
    if (c == '\n' && ++uart_newlines == 2) {
        said_hello = 1;
        said_hello_cycle = avr->cycle;
    }
    if (pty_fd >= 0) {
        ssize_t w;
        do {
            w = write(pty_fd, &c, 1);
        } while (w < 0 && errno == EINTR);
    } else {
        fputc(c, uart_out);
    }
}

static void uart_input(uint8_t c) {
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT), c);
}

/* Pads 1..6 on D2..D7 (PD2..PD7), 7..8 on D8..D9 (PB0..PB1); D12 = PB4. */
static void set_pin(char port, int bit, int level) {
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit), level ? 1 : 0);
}

static void set_button(int pad0, int down) {
    if (pad0 < 6) set_pin('D', pad0 + 2, !down);
    else set_pin('B', pad0 - 6, !down);
}

/* A contact bounces: the pin level a button pad shows at t (low = pressed). */
static int button_level_low(int pad0, double t) {
    /* press bounce: low, high, low, high, then low; release: high, low, then high */
    static const double press_edges[] = {0, 120, 260, 420, 600};
    static const double release_edges[] = {0, 150, 330};
    for (int i = 0; i < scn.nevents; i++) {
        const scn_event_t *e = &scn.ev[i];
        if (!e->is_button || e->pad != pad0) continue;
        double u = t - e->t_us;
        if (u < 0 || u >= e->hold_us + 1000.0) continue;
        if (u < e->hold_us) {
            int low = 1;
            for (int k = 0; k < 5; k++)
                if (u >= press_edges[k]) low = (k % 2 == 0);
            return low;
        }
        u -= e->hold_us;
        int low = 0;
        for (int k = 0; k < 3; k++)
            if (u >= release_edges[k]) low = (k % 2 == 1);
        return low;
    }
    return 0;
}

static void send_command(const char *body) {
    /* CRC-16/XMODEM, as the box checks it. */
    uint16_t crc = 0;
    for (const char *p = body; *p; p++) {
        crc ^= (uint16_t)((uint8_t)*p) << 8;
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    char line[100];
    int n = snprintf(line, sizeof line, "%s*%04X\n", body, crc);
    for (int i = 0; i < n; i++) uart_input((uint8_t)line[i]);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static int open_pty(void) {
    int fd = posix_openpt(O_RDWR | O_NOCTTY);
    if (fd < 0 || grantpt(fd) || unlockpt(fd)) {
        perror("pty");
        return -1;
    }
    struct termios tio;
    tcgetattr(fd, &tio);
    cfmakeraw(&tio);
    tcsetattr(fd, TCSANOW, &tio);
    /* Raw on the slave side too, so the firmware's bytes arrive unchanged. */
    int slave = open(ptsname(fd), O_RDWR | O_NOCTTY);
    if (slave >= 0) {
        tcgetattr(slave, &tio);
        cfmakeraw(&tio);
        tcsetattr(slave, TCSANOW, &tio);
        close(slave);
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* A pty master reports POLLHUP while nobody has the slave open. */
static int slave_open(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    poll(&p, 1, 0);
    return !(p.revents & POLLHUP);
}

int main(int argc, char **argv) {
    const char *out_path = NULL, *report_path = NULL, *elf_path = NULL, *scn_path = NULL, *ee_path = NULL;
    int use_pty = 0, realtime = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
        else if (!strcmp(argv[i], "--report") && i + 1 < argc) report_path = argv[++i];
        else if (!strcmp(argv[i], "--eeprom") && i + 1 < argc) ee_path = argv[++i];
        else if (!strcmp(argv[i], "--frontend") && i + 1 < argc) setenv("SCN_FRONTEND", argv[++i], 1);
        else if (!strcmp(argv[i], "--pty")) use_pty = realtime = 1;
        else if (!strcmp(argv[i], "--realtime")) realtime = 1;
        else if (!elf_path) elf_path = argv[i];
        else if (!scn_path) scn_path = argv[i];
        else {
            fprintf(stderr, "unexpected argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!elf_path || !scn_path) {
        fprintf(stderr, "usage: %s [--out FILE] [--report FILE] [--pty] [--realtime] ELF SCENARIO\n", argv[0]);
        return 2;
    }
    scn_init(&scn);
    if (scn_load(&scn, scn_path) != 0) return 2;

    uart_out = stdout;
    if (out_path && !(uart_out = fopen(out_path, "wb"))) {
        perror(out_path);
        return 2;
    }
    FILE *report = stderr;
    if (report_path && !(report = fopen(report_path, "w"))) {
        perror(report_path);
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);

    if (use_pty) {
        pty_fd = open_pty();
        if (pty_fd < 0) return 1;
        printf("PTY %s\n", ptsname(pty_fd));
        fflush(stdout);
        /* Like a Nano: the board (re)starts when its port is opened. */
        while (!stop && !slave_open(pty_fd)) usleep(2000);
        if (stop) return 0;
    }

    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf_path, &fw) != 0) {
        fprintf(stderr, "%s: cannot read the ELF\n", elf_path);
        return 2;
    }
    strcpy(fw.mmcu, "atmega328p");
    fw.frequency = F_CPU;
    avr = avr_make_mcu_by_name(fw.mmcu);
    if (!avr) {
        fprintf(stderr, "simavr has no atmega328p\n");
        return 2;
    }
    avr_init(avr);
    avr->log = LOG_NONE;
    avr_load_firmware(avr, &fw);
    avr->frequency = F_CPU;
    avr->vcc = avr->avcc = avr->aref = 5000;

    static uint8_t eeprom[1024];
    if (ee_path) {
        memset(eeprom, 0xFF, sizeof eeprom); /* an erased EEPROM */
        FILE *ef = fopen(ee_path, "rb");
        if (ef) {
            size_t got = fread(eeprom, 1, sizeof eeprom, ef);
            (void)got;
            fclose(ef);
        }
        avr_eeprom_desc_t ee = {.ee = eeprom, .offset = 0, .size = sizeof eeprom};
        avr_ioctl(avr, AVR_IOCTL_EEPROM_SET, &ee);
    }

    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~AVR_UART_FLAG_STDIO;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uart_output, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_OUT_TRIGGER), adc_trigger, NULL);

    /* Idle pins: buttons released (high), mode jumper D12 as the scenario says. */
    for (int p = 0; p < SCN_PADS; p++) set_button(p, 0);
    set_pin('B', 4, !scn.button_mode);

    /* HARNESS_PROFILE=file: instructions executed per word address, for finding hot spots. */
    static uint32_t *profile;
    const char *profile_path = getenv("HARNESS_PROFILE");
    if (profile_path) profile = calloc(16384, sizeof *profile);
    /* HARNESS_PROFILE_FROM / _TO (us): profile only that stretch of the run. */
    double profile_from = getenv("HARNESS_PROFILE_FROM") ? atof(getenv("HARNESS_PROFILE_FROM")) : -1e18;
    double profile_to = getenv("HARNESS_PROFILE_TO") ? atof(getenv("HARNESS_PROFILE_TO")) : 1e18;
    /* HARNESS_PROFILE_PACED=1: profile only while the sampler is slowed down (OCR2A past a quiet scan's). */
    int profile_paced = getenv("HARNESS_PROFILE_PACED") != NULL;
    if (getenv("HARNESS_LOSTLOG")) lostlog = fopen(getenv("HARNESS_LOSTLOG"), "w");
    if (getenv("HARNESS_ADCLOG")) adclog = fopen(getenv("HARNESS_ADCLOG"), "w");
    if (getenv("HARNESS_SCANPROF")) scanprof = fopen(getenv("HARNESS_SCANPROF"), "w");
    if (getenv("HARNESS_SCANPROF_CYCLES")) scanprof_min = (uint32_t)atoi(getenv("HARNESS_SCANPROF_CYCLES"));
    int sent = 0;
    int button_low[SCN_PADS] = {0};
    double wall0 = 0;
    avr_cycle_count_t end_cycle = 0;
    double next_io_us = 0;
    double next_pty_us = 0;
    for (;;) {
        /* (cycles, not instructions: the next instruction's, counted after it runs) */
        uint32_t prof_pc = avr->pc / 2;
        avr_cycle_count_t prof_cycle = avr->cycle;
        if (scanprof && said_hello) {
            uint16_t w = (uint16_t)(avr->pc / 2);
            if (scanprof_hit[w]++ == 0 && scanprof_n < 16384) scanprof_pc[scanprof_n++] = w;
        }
        {
            /* Stack high-water mark: the lowest stack pointer seen. */
            uint16_t sp = (uint16_t)(avr->data[0x5D] | (avr->data[0x5E] << 8));
            if (sp < sp_min && sp > 0x100) {
                sp_min = sp;
                sp_min_pc = avr->pc;
            }
        }
        if (lostlog && avr->data[0x4A] != lost_seen) { /* GPIOR1: the firmware's lost scans */
            lost_seen = avr->data[0x4A];
            fprintf(lostlog, "%.1f %u\n", now_us(), lost_seen);
        }
        int state = avr_run(avr);
        if (profile && clock_started && now_us() >= profile_from && now_us() < profile_to
            && (!profile_paced || avr->data[OCR2A_ADDR] > OCR2A_QUIET))
            profile[prof_pc] += (uint32_t)(avr->cycle - prof_cycle);
        if (state == cpu_Done || state == cpu_Crashed) {
            fprintf(stderr, "the firmware stopped (state %d) at cycle %llu\n", state,
                    (unsigned long long)avr->cycle);
            return 1;
        }
        if (!clock_started) {
            if (avr->data[TCCR1B_ADDR] != 0) {
                clock_started = 1;
                clock_start = avr->cycle;
                end_cycle = clock_start + (avr_cycle_count_t)scn.duration_us * CYCLES_PER_US;
                wall0 = wall_us();
            }
            continue;
        }
        double t = now_us();
        if (t < next_io_us) continue;
        /* Pins, commands and the pty every 10 us of simulated time (2 us for
         * buttons, whose edges are timed by the firmware's interrupt). */
        next_io_us = t + (scn.button_mode ? 2.0 : 10.0);
        /* The mode jumper is held for the whole run (the firmware's pull-up
         * write must not win over it). */
        set_pin('B', 4, !scn.button_mode);
        for (int p = 0; p < SCN_PADS; p++) {
            int low = button_level_low(p, t);
            if (low != button_low[p]) {
                button_low[p] = low;
                set_button(p, low);
            }
        }
        while (sent < scn.nsends && t >= scn.send[sent].t_us) send_command(scn.send[sent++].body);
        if (realtime) {
            double ahead = t - (wall_us() - wall0);
            if (ahead > 2000) usleep((useconds_t)ahead);
        }
        if (pty_fd >= 0 && t >= next_pty_us) {
            /* The terminal every 100 us of simulated time: 2.5 bytes at 250000 baud. */
            next_pty_us = t + 100.0;
            uint8_t buf[64];
            ssize_t n = read(pty_fd, buf, sizeof buf);
            for (ssize_t i = 0; i < n; i++) uart_input(buf[i]);
            if (avr->cycle >= end_cycle && !slave_open(pty_fd)) break;
        } else if (pty_fd < 0 && avr->cycle >= end_cycle) {
            break;
        }
        if (stop) break;
    }
    if (ee_path) {
        avr_eeprom_desc_t ee = {.ee = NULL, .offset = 0, .size = sizeof eeprom};
        avr_ioctl(avr, AVR_IOCTL_EEPROM_GET, &ee);
        FILE *ef = fopen(ee_path, "wb");
        if (ef && ee.ee) fwrite(ee.ee, 1, ee.size, ef);
        if (ef) fclose(ef);
    }
    if (uart_out != stdout) fclose(uart_out);
    else fflush(stdout);

    if (profile) {
        FILE *pf = fopen(profile_path, "w");
        for (int i = 0; pf && i < 16384; i++)
            if (profile[i]) fprintf(pf, "%x %u\n", i * 2, profile[i]);
        if (pf) fclose(pf);
    }
    if (getenv("HARNESS_DUMP")) fprintf(stderr, "UCSR0A=%02x UCSR0B=%02x UCSR0C=%02x UBRR0L=%02x TCCR1B=%02x\n", avr->data[0xC0], avr->data[0xC1], avr->data[0xC2], avr->data[0xC4], avr->data[0x81]);
    qsort(scan_cycles, nscans, sizeof scan_cycles[0], cmp_u32);
    fprintf(report, "clock_start_cycle=%llu\n", (unsigned long long)clock_start);
    fprintf(report, "hits=%lu\nhit_latency_max_us=%.0f\nhit_latency_max_at_us=%.0f\n", hit_lines, hit_latency_max_us,
            hit_latency_max_at_us);
    fprintf(report, "cycles=%llu\n", (unsigned long long)avr->cycle);
    fprintf(report, "sim_us=%.0f\n", now_us());
    fprintf(report, "uart_bytes=%lu\n", uart_bytes);
    fprintf(report, "stack_min_address=%u\n", sp_min);
    fprintf(report, "stack_min_pc=%u\n", sp_min_pc);
    fprintf(report, "sampler_restarts=%u\n", avr->data[0x4A]); /* GPIOR1 */
    fprintf(report, "fifo_peak=%u\n", avr->data[0x4B]);  /* GPIOR2 */
    fprintf(report, "scans=%d\n", nscans);
    if (nscans) {
        fprintf(report, "scan_cycles_min=%u\n", scan_cycles[0]);
        fprintf(report, "scan_cycles_median=%u\n", scan_cycles[nscans / 2]);
        fprintf(report, "scan_cycles_p99=%u\n", scan_cycles[(nscans * 99) / 100]);
        fprintf(report, "scan_cycles_max=%u\n", scan_cycles[nscans - 1]);
        fprintf(report, "scan_max_at_us=%.0f\n", scan_max_at_us);
        fprintf(report, "gap_cycles_max=%u\n", gap_max);
        fprintf(report, "gap_max_pad=%d\n", gap_max_pad);
        fprintf(report, "gap_max_at_us=%.0f\n", gap_max_at_us);
    }
    if (report != stderr) fclose(report);
    return 0;
}
