/*
 * GenMC model of Mirror's persistent atomic (RELAX, Algorithm 4.1) on a (value, sequence) pair,
 * with the 16-byte CAS as one atomic operation (x86_64's `lock cmpxchg16b`).
 *
 * Models: impl/perdure-relax/src/patomic.rs
 *   `Space::mirror_cas` (L5-L47 with the fix M1: a failed NVMM CAS retries from the top),
 *   `Space::cas_loop` (Mirror's fetch_add: CAS until it succeeds), `PAtomic::fetch_add` and
 *   `PAtomic::load` (DRAM's value word, Acquire: impl/perdure-relax/src/dram.rs `val`),
 *   `Space::finish_dram_half` (fix M2);
 * with
 *   `read_nvmm` (three SeqCst 8-byte loads, retried until untorn) as one SeqCst load of the pair,
 *   `DramReplica::read_pair` (impl/perdure-relax/src/dram.rs, x86_64: Acquire loads, retried
 *   until untorn) as one Acquire load, and both 16-byte CASes (the NVMM `compare_exchange` and
 *   `DramReplica::dwcas`, impl/perdure-pm/src/dword.rs `compare_exchange_16`) as one SeqCst CAS
 *   of the pair. A pair is packed into one 64-bit word (value << 32 | sequence): the values and
 *   sequences of the model are small. The write-backs and fences (pwb, pfence) are persistence,
 *   not GenMC's concern, and are left out; so is recovery (no recovery marks: M2's loop ends at
 *   once). The field starts at (0, 1) in both replicas (`seq_init`, no MSB-sequence space).
 *
 * Client (CI bound, 3 threads): two threads fetch_add(1); a third loads the field twice.
 * Retry loops are bounded: a thread that needs more than ROUNDS passes through mirror_cas's loop
 * is cut off (an `assume`, counted by GenMC as a blocked execution).
 * DEEP (DEPTH=deep): a third adder, and more rounds.
 *
 * Invariants:
 *   - the fetch_adds return distinct values, 0 and 1 (and 2): each increment is applied once;
 *   - at the end both replicas hold (ADDERS, 1 + ADDERS): DRAM caught up with NVMM;
 *   - the loader's two loads do not go backwards, and a load after every adder returned sees
 *     their sum (loads read DRAM, which is written only after NVMM);
 *   - a load that sees every increment synchronises with every adder: what an adder wrote before
 *     its fetch_add (a plain word) is visible, without a race, to that loader.
 *
 * Mutant (must be reported as a violation):
 *   MUTANT_NO_DRAM_CATCH_UP  L18-L27 removed: a thread proceeds from an NVMM pair ahead of DRAM
 *                            instead of helping DRAM catch up or waiting; its DRAM CAS then starts
 *                            from a stale pair and DRAM can be left behind NVMM.
 *
 * Ordering mutants (tools/genmc-weaken.py): read_nvmm SeqCst -> Acquire and read_pair Acquire ->
 * Relaxed survive: every decision they feed is validated by a SeqCst 16-byte CAS of that replica.
 *
 * Orderings (tools/genmc-orderings.py): read_nvmm's three loads and read_pair's three are one load
 * each here (their retry loops make them one untorn read of a pair written by 16-byte CASes).
 * genmc-partial: read_nvmm read_pair
 *
 * genmc-row: relax-mirror-cas
 * genmc-row: relax-mirror-cas-mutant-no-dram-catch-up -DMUTANT_NO_DRAM_CATCH_UP violates=rc11,imm,tso
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <genmc.h> /* __VERIFIER_assume */

#define SC memory_order_seq_cst
#define ACQ memory_order_acquire

#ifdef DEEP
#define ADDERS 3
#define ROUNDS 8
#else
#define ADDERS 2
#define ROUNDS 5
#endif

static inline uint64_t pack(uint64_t v, uint64_t s) { return (v << 32) | s; }
static inline uint64_t val_of(uint64_t p) { return p >> 32; }
static inline uint64_t seq_of(uint64_t p) { return p & 0xffffffffUL; }
static inline uint64_t next_seq(uint64_t s) { return s + 1; }

atomic_ulong nvmm; /* the NVMM replica's (value, sequence) */
atomic_ulong dram; /* the DRAM replica's (value, sequence) */

static uint64_t read_nvmm(void) { return atomic_load_explicit(&nvmm, SC); } /* rust: read_nvmm load SeqCst */
static uint64_t read_pair(void) { return atomic_load_explicit(&dram, ACQ); } /* rust: read_pair load Acquire */
static uint64_t dram_val(void) { return val_of(atomic_load_explicit(&dram, ACQ)); } /* rust: val load Acquire */

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

/* Space::cas_loop / PAtomic::fetch_add */
static uint64_t fetch_add(uint64_t delta, int *rounds)
{
	uint64_t cur = dram_val();
	for (;;) {
		uint64_t now;
		if (mirror_cas(cur, cur + delta, &now, rounds))
			return cur;
		cur = now;
	}
}

uint64_t got[ADDERS];
atomic_int adders_done;
int note[ADDERS]; /* plain: written by adder i before its fetch_add, read by a loader that saw it */

void *adder(void *arg)
{
	int i = (int)(intptr_t)arg, rounds = 0;
	note[i] = 1;
	got[i] = fetch_add(1, &rounds);
	atomic_fetch_add_explicit(&adders_done, 1, SC);
	return NULL;
}

void *loader(void *arg)
{
	uint64_t a = dram_val();
	int done = atomic_load_explicit(&adders_done, SC);
	uint64_t b = dram_val();
	assert(b >= a && "a load went backwards");
	assert((done < ADDERS || b == ADDERS) && "a load after every fetch_add returned misses one");
	/* Message passing through the field alone: a load that sees every increment happens after
	 * every adder's earlier writes (GenMC reports a race on `note` otherwise). */
	if (b == ADDERS)
		for (int i = 0; i < ADDERS; i++)
			assert(note[i] == 1);
	return NULL;
}

int main(void)
{
	atomic_init(&nvmm, pack(0, 1));
	atomic_init(&dram, pack(0, 1));
	pthread_t t[ADDERS], l;
	for (int i = 0; i < ADDERS; i++)
		pthread_create(&t[i], NULL, adder, (void *)(intptr_t)i);
	pthread_create(&l, NULL, loader, NULL);
	for (int i = 0; i < ADDERS; i++)
		pthread_join(t[i], NULL);
	pthread_join(l, NULL);
	uint64_t seen = 0;
	for (int i = 0; i < ADDERS; i++) {
		assert(got[i] < ADDERS && !(seen & (1UL << got[i])) && "an increment applied twice or lost");
		seen |= 1UL << got[i];
	}
	uint64_t n = atomic_load_explicit(&nvmm, SC), d = atomic_load_explicit(&dram, SC);
	assert(n == pack(ADDERS, 1 + ADDERS) && "NVMM misses an increment");
	assert(d == n && "DRAM left behind NVMM");
	return 0;
}
