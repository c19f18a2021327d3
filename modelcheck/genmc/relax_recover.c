/*
 * GenMC model of RELAX's `recover_field` (Algorithm 6.2 with the fixes R1 and R2) against a thread
 * that recovers the same field and then writes it with Mirror's CAS, after a crash.
 *
 * Models: impl/perdure-relax/src/patomic.rs: `recover_field` (up to PATIENCE attempts, then
 * `diverged`) and `recover_attempt` (L1 DRAM pair, L2 NVMM pair, L3 equal, R2's re-read of DRAM,
 * the sequence window, L4.1's CAS of NVMM's sequence, L4.2; R1's write-back and fence are
 * persistence and left out), then L5's 16-byte CAS of DRAM; and `mirror_cas` with fixes M1 and M2
 * as transcribed in relax_mirror_cas.c (no recovery marks: a data field). As there, a pair is one
 * packed word (value << 32 | sequence, sequences 32-bit, so the window's bound is 2^31) and each
 * 16-byte access one atomic operation: `read_nvmm` one SeqCst load, `read_pair` one Acquire
 * load (`DramReplica::read_pair`, impl/perdure-relax/src/dram.rs), the 16-byte CASes SeqCst
 * (native cmpxchg16b). L4.1, an 8-byte SeqCst CAS of the sequence
 * word on x86_64, is a CAS of the packed pair expecting the value read at L2: it can fail where
 * the 8-byte CAS would not (the value changed, the sequence not), which a Mirror write, moving
 * both, never causes.
 * Not modelled: pointer fields (`recover_field_ptr`, marks), batches (`recover_fields`).
 *
 * Client (2 threads, after a crash; NVMM holds (5, 7)):
 *   recoverer  recover_field;
 *   writer     recover_field, then mirror_cas(5 -> 6);
 *   DEEP: a second recoverer.
 * DRAM holds garbage left from before the crash, (9, 7 + 2^31 + 1): just outside the window of
 * NVMM's sequence 7, and inside the window of 8, the sequence after the writer's write (the case
 * of finding R2); -DAHEAD: (9, 12), inside the window of 7 (L4.1 moves NVMM's sequence to 13).
 * Invariants: both recoveries return (none diverges within PATIENCE attempts), the writer's CAS
 * succeeds (recovery keeps the value 5), and after the joins both replicas hold (6, 8), or
 * (6, 14) with -DAHEAD: recovery moved NVMM's sequence at most once, and before the write.
 *
 * Mutant (must be reported as a violation):
 *   MUTANT_NO_REREAD   without R2's re-read of DRAM (the Rust mutant RecoverNoReread): the
 *                      recoverer reads the garbage, then NVMM after the writer's write, finds
 *                      itself in the window and moves NVMM's sequence after recovery.
 *
 * PATIENCE is 4 here (2^26 in the Rust code): "diverged" in this model means "needed more than
 * four attempts", which the correct code never does in these clients.
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11): `relax-recover` 0 of 4, `relax-recover-ahead`
 * 1 of 4: `read_pair` Acquire -> Relaxed, caught only as a recovery needing more than four
 * attempts (the model's bound, not a wrong result). Survivors: `read_nvmm` SeqCst -> Acquire
 * (every decision it feeds is validated by a SeqCst CAS, as in relax_mirror_cas.c), L4.1's CAS
 * SeqCst -> AcqRel (a read-modify-write), and its failure ordering (not modelled by GenMC).
 *
 * Orderings (tools/genmc-orderings.py): `read_nvmm`'s three loads and `read_pair`'s three are one
 * load each (as in relax_mirror_cas.c); recover_attempt's 16-byte CAS path (off native
 * cmpxchg16b) is not taken.
 * genmc-partial: read_nvmm read_pair
 *
 * genmc-row: relax-recover
 * genmc-row: relax-recover-ahead -DAHEAD
 * genmc-row: relax-recover-mutant-no-reread -DMUTANT_NO_REREAD violates=rc11,imm,tso
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define ACQ memory_order_acquire

#define PATIENCE 4
#define ROUNDS 6
#define SEQ_MASK 0xffffffffULL
#define SEQ_MSB (1ULL << 31)

static inline uint64_t pack(uint64_t v, uint64_t s) { return (v << 32) | (s & SEQ_MASK); }
static inline uint64_t val_of(uint64_t p) { return p >> 32; }
static inline uint64_t seq_of(uint64_t p) { return p & SEQ_MASK; }
static inline uint64_t next_seq(uint64_t s) { return (s + 1) & SEQ_MASK; }

atomic_ulong nvmm; /* the NVMM replica's (value, sequence) */
atomic_ulong dram; /* the DRAM replica's (value, sequence) */

static uint64_t read_nvmm(void) { return atomic_load_explicit(&nvmm, SC); } /* rust: read_nvmm load SeqCst */
static uint64_t read_pair(void) { return atomic_load_explicit(&dram, ACQ); } /* rust: read_pair load Acquire */

static bool cas16(atomic_ulong *w, uint64_t cur, uint64_t new, uint64_t *seen)
{
	uint64_t expect = cur;
	bool ok = atomic_compare_exchange_strong_explicit(w, &expect, new, SC, SC); /* compare_exchange_16: lock cmpxchg16b, SeqCst */
	*seen = expect;
	return ok;
}

static bool dwcas(uint64_t cur, uint64_t new)
{
	uint64_t seen;
	return cas16(&dram, cur, new, &seen);
}

/* Fix M2 (without recovery marks: DRAM at the old sequence and value means nobody copied yet). */
static void finish_dram_half(uint64_t before, uint64_t after, int *rounds)
{
	for (;;) {
		__VERIFIER_assume(++*rounds <= ROUNDS);
		uint64_t now = read_pair();
		if (seq_of(now) != seq_of(before) || val_of(now) != val_of(before))
			return;
		if (dwcas(now, after))
			return;
	}
}

/* Algorithm 4.1: true and the field updated if it held `expected`, else false and *actual. */
static bool mirror_cas(uint64_t expected, uint64_t new, uint64_t *actual, int *rounds)
{
	for (;;) {
		__VERIFIER_assume(++*rounds <= ROUNDS);
		uint64_t p = read_nvmm();                  /* L5-L7 */
		uint64_t d = read_pair();                  /* L9-L11 */
		uint64_t pv = val_of(p), ps = seq_of(p), vv = val_of(d), vs = seq_of(d);
#ifndef MUTANT_NO_DRAM_CATCH_UP
		if (ps == next_seq(vs) && ps != vs) {      /* L18-L24: help the write whose NVMM half is done */
			dwcas(d, p);
			continue;
		}
		if (ps != vs)                              /* L27 */
			continue;
#endif
		if (pv != expected) {                      /* L30-L33 */
			*actual = pv;
			return false;
		}
		uint64_t after = pack(new, next_seq(ps)); /* L37-L40 */
		uint64_t seen;
		bool ok = cas16(&nvmm, p, after, &seen);
		if (ok) {                                  /* L44, and fix M2 */
			if (!dwcas(d, after))
				finish_dram_half(d, after, rounds);
			return true;
		}
		/* L46-L47 with fix M1: retry from the top */
	}
}

/* ---- recovery ---- */

static bool in_window(uint64_t sd, uint64_t snv)
{
	uint64_t d = (sd - snv) & SEQ_MASK;
	return d != 0 && d <= SEQ_MSB;
}

enum kind { EQUAL, RETRY, COPY };

static enum kind recover_attempt(uint64_t *d_out, uint64_t *nv_out)
{
	uint64_t d = read_pair();  /* L1 */
	uint64_t nv = read_nvmm(); /* L2 */
	if (nv == d)
		return EQUAL; /* L3 */
#ifndef MUTANT_NO_REREAD
	if (read_pair() != d)
		return RETRY; /* R2: goto 1 */
#endif
	uint64_t vnv = val_of(nv), snv = seq_of(nv), sd = seq_of(d);
	if (in_window(sd, snv)) {
		uint64_t e = nv;
		/* L4.1 */
		if (!atomic_compare_exchange_strong_explicit(&nvmm, &e, pack(vnv, sd + 1), SC, SC)) /* rust: recover_attempt compare_exchange SeqCst SeqCst */
			return RETRY;
		snv = next_seq(sd); /* L4.2 */
	}
	*d_out = d;
	*nv_out = pack(vnv, snv);
	return COPY;
}

static bool recover_field(void)
{
	for (int i = 0; i < PATIENCE; i++) {
		uint64_t d, nv;
		switch (recover_attempt(&d, &nv)) {
		case EQUAL:
			return true;
		case RETRY:
			continue;
		case COPY:
			if (dwcas(d, nv)) /* L5 */
				return true;
		}
	}
	return false; /* diverged */
}

/* ---- the client ---- */

static bool recovered[2], wrote;

static void *recoverer(void *arg)
{
	recovered[0] = recover_field();
	return NULL;
}

static void *writer(void *arg)
{
	int rounds = 0;
	uint64_t actual = 0;
	recovered[1] = recover_field();
	if (recovered[1])
		wrote = mirror_cas(5, 6, &actual, &rounds);
	return NULL;
}

#ifdef DEEP
static bool recovered2;
static void *recoverer2(void *arg)
{
	recovered2 = recover_field();
	return NULL;
}
#endif

int main(void)
{
	atomic_init(&nvmm, pack(5, 7));
#ifdef AHEAD
	atomic_init(&dram, pack(9, 12));
#else
	atomic_init(&dram, pack(9, 7 + SEQ_MSB + 1));
#endif
	pthread_t r, w;
	pthread_create(&r, NULL, recoverer, NULL);
	pthread_create(&w, NULL, writer, NULL);
#ifdef DEEP
	pthread_t r2;
	pthread_create(&r2, NULL, recoverer2, NULL);
	pthread_join(r2, NULL);
	assert(recovered2 && "a recovery diverged");
#endif
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	assert(recovered[0] && recovered[1] && "a recovery diverged");
	assert(wrote && "the write after recovery failed: recovery changed the value");
	uint64_t n = atomic_load_explicit(&nvmm, SC), d = atomic_load_explicit(&dram, SC);
#ifdef AHEAD
	uint64_t want = pack(6, 14);
#else
	uint64_t want = pack(6, 8);
#endif
	assert(n == want && "NVMM does not hold the write at the sequence after recovery's");
	assert(d == n && "DRAM does not hold NVMM's pair");
	return 0;
}
