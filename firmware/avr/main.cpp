/*
 * main.cpp - entry point for the plain avr-gcc build of padbox.ino (the
 * Arduino IDE supplies its own main(), which also calls setup() and loop()).
 * Kept outside the sketch folder so the IDE never compiles it.
 */
void setup(void);
void loop(void);

int main(void) {
    setup();
    for (;;) loop();
}
