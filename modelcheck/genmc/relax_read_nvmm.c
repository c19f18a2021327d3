/*
 * GenMC model of RELAX's `read_nvmm` against the EMULATED 16-byte CAS (issue 16's known finding).
 *
 * Models:
 *   impl/perdure-relax/src/patomic.rs, `Space::read_nvmm` (Algorithm 4.1 L5-L7): sequence, value,
 *     sequence as three SeqCst 8-byte loads of the NVMM replica, retried until the two sequence
 *     loads agree (the retry has no side effect, so the model takes one round and assumes it
 *     agreed: GenMC's usual treatment of a spin loop);
 *   impl/perdure-pm/src/dword.rs, `emulated::cas16` (used off x86_64 and under loom and shuttle):
 *     under one global lock, Acquire loads of both words, then Release stores of the value word
 *     (words[0]) and then of the sequence word (words[1]);
 *   impl/perdure-relax/src/dram.rs, `DramReplica::read_pair`'s non-x86 path (-DCAS_LOAD): the pair
 *     read as a 16-byte CAS-load, cas16(words, 0, 0), under the same lock;
 *   patomic.rs, `Space::recover_attempt` L4.1 (-DSEQ_BUMP, below).
 *
 * Client (2 threads): the field holds (value, seq) = (0, 0);
 *   writer  mirror_cas's L37-L40 step: cas16 (0, 0) -> (1, 1);
 *   reader  read_nvmm (or, with CAS_LOAD, read_pair's CAS-load).
 *
 * Invariant: the reader returns a pair the field held: (0, 0) or (1, 1).
 *
 * Expected result: the three 8-byte loads VIOLATE it under every model, SC included: the reader
 * loads seq 0, the writer stores value 1, the reader loads value 1 and seq 0 again, before the
 * writer's sequence store -- the new value with the old sequence. The emulation is atomic only
 * against other 16-byte operations (dword.rs says so). This was read_nvmm's only path; it is now
 * its path only where the 16-byte CAS is one event to 8-byte accesses (native cmpxchg16b, Sim:
 * `Pool::dword_cas_atomic_with_words`), and elsewhere read_nvmm is a 16-byte CAS-load like
 * read_pair's, which the rows genmc:relax-read-pair-cas-load/* verify. The rows
 * genmc:relax-read-nvmm-torn/* stay as the regression model of why: they pass only while GenMC
 * reports the torn pair.
 *
 * Ordering mutants (tools/genmc-weaken.py, on the rows that verify): none caught: the emulated
 * CAS's Acquire/Release are covered by its lock, and read_nvmm's loads and L4.1's 8-byte CAS do not
 * run in those rows.
 *
 * Second finding of the same kind (-DSEQ_BUMP, rows genmc:relax-seq-bump-lost/*): `recover_attempt`
 * (patomic.rs, Algorithm 6.2 L4.1) bumps NVMM's sequence with an 8-byte CAS of the sequence word
 * while mirror_cas may be in the emulated 16-byte CAS of the same pair. The emulation loads both
 * words, compares, then stores both: the bump can land between its load and its stores, both
 * CASes succeed, and the emulation's store overwrites the bump (a lost update), under every model.
 * recover_attempt now takes this 8-byte path only where the 16-byte CAS is atomic with 8-byte
 * accesses; elsewhere L4.1 is a 16-byte CAS of the pair, which -DSEQ_BUMP -DBUMP_DWCAS (rows
 * genmc:relax-seq-bump-dwcas/*) verifies. The model shows the primitives do not compose; whether
 * RELAX's protocol let the two overlap on one field is not established by it.
 *
 * genmc-row: relax-read-nvmm-torn violates=rc11,imm,tso
 * genmc-row: relax-seq-bump-lost -DSEQ_BUMP violates=rc11,imm,tso
 * genmc-row: relax-seq-bump-dwcas -DSEQ_BUMP -DBUMP_DWCAS
 * genmc-partial: recover_attempt
 * genmc-row: relax-read-pair-cas-load -DCAS_LOAD
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define ACQ memory_order_acquire
#define REL memory_order_release

#include <genmc.h> /* __VERIFIER_assume */

atomic_ulong words[2];          /* words[0] = value (lower address), words[1] = sequence */
pthread_mutex_t cas16_lock = PTHREAD_MUTEX_INITIALIZER;

/* dword.rs: emulated::cas16 (value = words[0], sequence = words[1]) */
bool cas16(uint64_t cur_v, uint64_t cur_s, uint64_t new_v, uint64_t new_s, uint64_t *seen_v,
	   uint64_t *seen_s)
{
	pthread_mutex_lock(&cas16_lock);
	uint64_t v = atomic_load_explicit(&words[0], ACQ); /* rust: cas16 load Acquire */
	uint64_t s = atomic_load_explicit(&words[1], ACQ); /* rust: cas16 load Acquire */
	bool ok = v == cur_v && s == cur_s;
	if (ok) {
		atomic_store_explicit(&words[0], new_v, REL); /* rust: cas16 store Release */
		atomic_store_explicit(&words[1], new_s, REL); /* rust: cas16 store Release */
	}
	pthread_mutex_unlock(&cas16_lock);
	*seen_v = v;
	*seen_s = s;
	return ok;
}

/* patomic.rs: Space::read_nvmm (one round of the loop, assumed untorn by its own check) */
void read_nvmm(uint64_t *v, uint64_t *s)
{
	uint64_t s1 = atomic_load_explicit(&words[1], SC); /* rust: read_nvmm load SeqCst */
	uint64_t v1 = atomic_load_explicit(&words[0], SC); /* rust: read_nvmm load SeqCst */
	uint64_t s2 = atomic_load_explicit(&words[1], SC); /* rust: read_nvmm load SeqCst */
	__VERIFIER_assume(s1 == s2);
	*v = v1;
	*s = s1;
}

/* dram.rs: DramReplica::read_pair, the non-x86 path: a 16-byte CAS-load */
void read_pair_cas_load(uint64_t *v, uint64_t *s) { cas16(0, 0, 0, 0, v, s); }

bool cas_ok, bump_ok;

void *writer(void *arg)
{
	uint64_t sv, ss;
	cas_ok = cas16(0, 0, 1, 1, &sv, &ss);
#ifndef SEQ_BUMP
	assert(cas_ok);
#endif
	return NULL;
}

/* patomic.rs: recover_attempt L4.1, NVMM's sequence 0 -> 5: the 8-byte CAS of the sequence word
 * (the native path), or, with BUMP_DWCAS, the fix's 16-byte CAS of the pair read at line 2 */
void *bumper(void *arg)
{
#ifdef BUMP_DWCAS
	uint64_t sv, ss;
	bump_ok = cas16(0, 0, 0, 5, &sv, &ss);
#else
	uint64_t expect = 0;
	/* rust: recover_attempt compare_exchange SeqCst SeqCst */
	bump_ok = atomic_compare_exchange_strong_explicit(&words[1], &expect, 5, SC, SC);
#endif
	return NULL;
}

void *reader(void *arg)
{
	uint64_t v, s;
#ifdef CAS_LOAD
	read_pair_cas_load(&v, &s);
#else
	read_nvmm(&v, &s);
#endif
	assert(((v == 0 && s == 0) || (v == 1 && s == 1)) && "a torn (value, sequence) pair");
	return NULL;
}

int main(void)
{
	pthread_t w, r;
	pthread_create(&w, NULL, writer, NULL);
#ifdef SEQ_BUMP
	pthread_create(&r, NULL, bumper, NULL);
#else
	pthread_create(&r, NULL, reader, NULL);
#endif
	pthread_join(w, NULL);
	pthread_join(r, NULL);
#ifdef SEQ_BUMP
	/* Both expect sequence 0 and change it: one of them must fail, and the field shows the one
	 * that succeeded. */
	uint64_t v = atomic_load_explicit(&words[0], SC), s = atomic_load_explicit(&words[1], SC);
	assert(!(cas_ok && bump_ok) && "the 16-byte CAS and the sequence bump both succeeded");
	assert((!cas_ok || (v == 1 && s == 1)) && (!bump_ok || (v == 0 && s == 5)));
#endif
	return 0;
}
