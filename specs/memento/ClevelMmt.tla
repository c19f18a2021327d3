------------------------------ MODULE ClevelMmt ------------------------------
(***************************************************************************)
(* Clevel-mmt, the detectable level-hashing table of seed 001 (§7.2) as    *)
(* perdure builds it: impl/perdure-memento/src/ds/clevel.rs (ClevelTable:  *)
(* free_slot L730, place L758, insert L784, delete L809, resize L851,     *)
(* grow L571, next_of L533, find_unmarked L650, seal_moved L695, attach   *)
(* L424; lines as of this module's commit).                                *)
(*                                                                         *)
(* The model is at the grain of the code's persistent words:               *)
(*  * slots: Slot <<l, j>> is slot j of level l; its word is an item (the  *)
(*    item block's identity, `it`, 0 for none) with the MOVED (`mv`) and   *)
(*    DONE (`dn`) tag bits: empty, an item, marked (moving), done (moved), *)
(*    or SEALED (no item, MOVED: passed by the rehash while empty);        *)
(*  * levels: level l's `next` link [to, dirty] (link-and-persist: linked  *)
(*    dirty, written back, the dirty bit cleared); levels are numbered in  *)
(*    the order they are made, each twice the size of the one below        *)
(*    (Size, in buckets of one slot: CI's tables have 1 slot per bucket); *)
(*  * `last`: the bottom level.                                            *)
(* Item blocks are immutable and written back before they are published   *)
(* (new_item + checkpoint_with's fence): not modelled as lines.            *)
(*                                                                         *)
(* Px86 line persistence (PX86.md), as InsDelQueue.tla and Checkpoint.tla *)
(* have it, with each slot, each level's link and `last` a line of its own *)
(* (a superset of the code's crash images: slots of one bucket share a     *)
(* line in the code): a line is the sequence of the words it held, `w`,    *)
(* and a mark `m` (the prefix guaranteed persisted).  Pwb(t, ln) records   *)
(* the line's length at the write-back, Fence(t) raises the marks of the   *)
(* thread's write-backs to it, and a full crash keeps, line by line, any   *)
(* word at or after the mark (a write persists after a pwb + fence of its  *)
(* line, or at any earlier point the crash picks).                         *)
(*                                                                         *)
(* ABSTRACTIONS (what this spec does not check):                           *)
(*  * The detectable CAS on a slot or on `last` (cas.rs, two-word form) is *)
(*    one atomic step, DCas: the word changes at once (the code's first    *)
(*    plain CAS, L26) and the thread's `fly` records the write; it is the  *)
(*    thread's effect once its line is persisted past it (the code's L33  *)
(*    flush), which the thread waits for before its next step, and which   *)
(*    another write to the line waits for (the annotated word: a plain CAS *)
(*    fails on it, a detectable CAS helps, i.e. writes it back first).     *)
(*    After a full crash the CAS took effect iff the image kept the write. *)
(*    That the real algorithm implements this exactly once is the subject  *)
(*    of specs/memento/DetectableCAS.tla (Form = "twoWord"), not checked   *)
(*    here.  Checkpoints (insert's `node`, delete's absent result, the     *)
(*    resize's position) are durable when taken (Checkpoint.tla).          *)
(*  * Hashing: every slot of a level is a candidate of every key (a       *)
(*    superset of the code's two buckets per level), and free_slot's      *)
(*    choice is any empty slot of any linked level whose link is durable   *)
(*    (a superset of "top first, levels not being drained", which also    *)
(*    covers a thread's stale view).  The scans that decide (insert's     *)
(*    find, delete's absent, the resize's "drainable") are atomic steps.   *)
(*  * The rehash's visiting order is free (the code: slot by slot), the   *)
(*    unlink waits until every slot of the drained level is sealed or      *)
(*    done.  Reclamation (retire) is not modelled; a grown level is made  *)
(*    and linked in one step (its zeroed, persisted block is not a line).  *)
(*  * Keys are inserted only by their owner thread (Work): clevel.rs's    *)
(*    caller contract (concurrent inserts of one key are not              *)
(*    linearizable).  One full crash (MaxCrashes), no thread crash.       *)
(*                                                                         *)
(* Properties: TypeOK; NoDuplicate (no key has two items present, no item  *)
(* is present unmarked in two slots); Agree (the keys present in the table *)
(* -- an item in a level of the chain, unmarked or marked and not yet      *)
(* placed elsewhere -- are exactly the abstract set `ab` the operations'   *)
(* effects made: an inserted and returned key is not lost across a crash, *)
(* a deleted key does not come back, a rehash loses nothing); ExactlyOnce *)
(* (each insert or delete took effect at most once, `eff`) and Detectable *)
(* (every finished insert/delete reports true iff it took effect, before   *)
(* or after the crash).  traces/memento/clevel/ClevelTrace.tla replays the *)
(* code's traces through this module's actions.                            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    NThreads,   \* threads 1..NThreads
    Work,       \* Work[t]: thread t's operations, <<"ins", k>>, <<"del", k>> or <<"rsz", 0>>
    Size,       \* Size[l]: buckets (= slots) of level l; levels 1 (bottom) and 2 exist at first
    Pre,        \* items bulk-loaded at creation: a sequence of <<slot, key>> (item 900 + j)
    MaxCrashes, \* full-system crashes
    ReadDurable \* TRUE: readers decide only on durable words (the code's detectable LOAD);
                \* FALSE: the mutant whose readers act on another's CAS before it is durable

Threads == 1 .. NThreads
\* Values for the cfgs.  CI: thread 1 deletes the bulk-loaded key 3 (which the rehash moves),
\* thread 2 inserts key 2 (growing the chain) and rehashes.  Deep: thread 1 also inserts key 1
\* and deletes key 2.  Key 3 is bulk-loaded in the bottom level; levels of 1, 2, 4 slots.
CIWork == <<<<<<"del", 3>>>>, <<<<"ins", 2>>, <<"rsz", 0>>>>>>
DeepWork == <<<<<<"ins", 1>>, <<"del", 3>>, <<"del", 2>>>>, <<<<"ins", 2>>, <<"rsz", 0>>>>>>
\* 3 threads (ClevelMmt_3T): CI's operations, one per thread: the delete, the insert (which
\* grows the chain) and the rehash run concurrently.
ThreeWork == <<<<<<"del", 3>>>>, <<<<"ins", 2>>>>, <<<<"rsz", 0>>>>>>
CISize == <<1, 2, 4>>
CIPre == <<<<<<1, 0>>, 3>>>>
Levels == 1 .. Len(Size)
Slots == UNION {{<<l, j>> : j \in 0 .. Size[l] - 1} : l \in Levels}
\* (A constant function, so that TLC computes each level's slots once.)
LevelSlotsF == [l \in Levels |-> {<<l, j>> : j \in 0 .. Size[l] - 1}]
LevelSlots(l) == LevelSlotsF[l]

\* Items: thread t's operation i inserts item 10 * t + i; bulk-loaded item j is 900 + j.
ItemOf(t, i) == 10 * t + i
PreItem(j) == 900 + j
Items == UNION {{ItemOf(t, i) : i \in DOMAIN Work[t]} : t \in Threads} \cup {PreItem(j) : j \in DOMAIN Pre}
KeyOf(x) == IF x >= 900 THEN Pre[x - 900][2] ELSE Work[x \div 10][x % 10][2]

\* Words.
SW(x, mv, dn) == [it |-> x, mv |-> mv, dn |-> dn]
Empty == SW(0, FALSE, FALSE)
Sealed == SW(0, TRUE, FALSE)
LW(to, d) == [to |-> to, dirty |-> d]

\* Lines.
SLine(s) == <<"s", s[1], s[2]>>
NLine(l) == <<"n", l>>
LastLine == <<"last">>
LineIds == {SLine(s) : s \in Slots} \cup {NLine(l) : l \in Levels} \cup {LastLine}

VARIABLES
    pm,      \* [LineIds -> [w: Seq(word), m: 1..Len(w)]]
    fl,      \* [Threads -> SUBSET (LineIds \X Nat)]: write-backs not yet fenced
    th,      \* [Threads -> record]: the thread's operation and where it is
    fly,     \* [Threads -> [ln, j]]: the thread's last detectable CAS's write (j = 0: none)
    crashes,
    ab,      \* ghost: the abstract set of keys present
    eff,     \* ghost: [Threads -> Nat]: effects of the current insert/delete that stand
    out,     \* ghost: [Threads -> Seq([res, eff])]: finished operations' results and effects
    wb       \* [Threads -> SUBSET LineIds]: lines the thread wrote and has not written back
             \* (only to bound Next's write-backs: Pwb itself may write back any line)

vars == <<pm, fl, th, fly, crashes, ab, eff, out, wb>>

Vis(ln) == pm[ln].w[Len(pm[ln].w)]
Dur(ln) == pm[ln].w[pm[ln].m]
Write(m, ln, v) == [m EXCEPT ![ln].w = Append(@, v)]
NoFly == [ln |-> LastLine, j |-> 0]
Durable(t) == fly[t].j = 0 \/ pm[fly[t].ln].m >= fly[t].j
\* A detectable CAS of another thread on ln is not durable yet: its word is annotated.
Busy(t, ln) == \E u \in Threads \ {t} : fly[u].ln = ln /\ ~Durable(u)

SlotW(s) == Vis(SLine(s))

\* A reader never acts on another thread's detectable CAS that is not durable: the code's
\* detectable LOAD (cas.rs load/load_help) of an annotated word waits for its owner's
\* write-back (L33) or writes it back itself (LOADHELP) before it returns the value.  So a
\* decision about key `key` waits until no pending CAS of another thread wrote or replaced
\* an item of that key (the code reads every word in the key's buckets; with every slot a
\* candidate here, only the key's own are required, the weakest guard that keeps decisions
\* on durable words).
ItKey(w) == IF w.it = 0 THEN 0 ELSE KeyOf(w.it)
KeySettled(t, key) ==
    ReadDurable =>
    \A u \in Threads \ {t} :
        (~Durable(u) /\ fly[u].ln[1] = "s") =>
            LET w == pm[fly[u].ln].w IN ItKey(w[fly[u].j]) # key /\ ItKey(w[fly[u].j - 1]) # key

\* The chain of levels in memory m (a function from lines to words), bottom to top.
RECURSIVE ChainFrom(_, _, _)
ChainFrom(m, l, n) == IF l = 0 \/ n = 0 THEN <<>> ELSE <<l>> \o ChainFrom(m, m[NLine(l)].to, n - 1)
ChainOf(m) == ChainFrom(m, m[LastLine], Len(Size))
VisMem == [ln \in DOMAIN pm |-> Vis(ln)]
Chain == ChainOf(VisMem)
\* (The LETs evaluate Chain once, not once per use.)
InChain(l) == LET c == Chain IN \E j \in DOMAIN c : c[j] = l
Bottom == Vis(LastLine)
Top == LET c == Chain IN c[Len(c)]
\* clevel.rs View::threshold: the bottom level is drained while it has at most a quarter
\* of the top level's buckets.
Drainable == Len(Chain) > 1 /\ Size[Bottom] <= Size[Top] \div 4
\* A level a thread may place into: linked, and its link durable (next_of writes a dirty
\* link back before returning it); the bottom level through `last`.
Usable(l) == InChain(l) /\ (l = Bottom \/ \E l0 \in Levels : Dur(NLine(l0)).to = l)

\* The items present in memory m: in a level of its chain, unmarked, or marked and not
\* done with no unmarked copy (a move not yet placed).
ChainSlots(m) == LET c == ChainOf(m) IN UNION {LevelSlots(c[j]) : j \in DOMAIN c}
Holds(m, s, x) == m[SLine(s)].it = x
Placed(m, x) == \E s \in ChainSlots(m) : Holds(m, s, x) /\ ~m[SLine(s)].mv
LiveItems(m) ==
    LET cs == ChainSlots(m) IN
    {x \in Items : \E s \in cs : Holds(m, s, x) /\
                      (~m[SLine(s)].mv \/ (~m[SLine(s)].dn /\ \A s2 \in cs : Holds(m, s2, x) => m[SLine(s2)].mv))}
Contents(m) == {KeyOf(x) : x \in LiveItems(m)}
Present(key) == key \in Contents(VisMem)
\* (Placed is used where one item is asked about.)

Op(t) == Work[t][th[t].i]
Idle(i) == [pc |-> "Inv", i |-> i, ck |-> "none", lv |-> 0, mv |-> <<0, 0>>, x |-> 0,
            began |-> FALSE, res |-> 0]
Running(t) == th[t].pc \notin {"Inv", "Done"}

InitLine(v) == [w |-> <<v>>, m |-> 1]
InitPm == [ln \in LineIds |->
               CASE ln = LastLine -> InitLine(1)
                 [] ln[1] = "n" -> InitLine(LW(IF ln[2] = 1 THEN 2 ELSE 0, FALSE))
                 [] OTHER -> InitLine(IF \E j \in DOMAIN Pre : SLine(Pre[j][1]) = ln
                                      THEN SW(PreItem(CHOOSE j \in DOMAIN Pre : SLine(Pre[j][1]) = ln),
                                              FALSE, FALSE)
                                      ELSE Empty)]
Init ==
    /\ pm = InitPm
    /\ fl = [t \in Threads |-> {}]
    /\ th = [t \in Threads |-> Idle(1)]
    /\ fly = [t \in Threads |-> NoFly]
    /\ crashes = 0
    /\ ab = {Pre[j][2] : j \in DOMAIN Pre}
    /\ eff = [t \in Threads |-> 0]
    /\ out = [t \in Threads |-> <<>>]
    /\ wb = [t \in Threads |-> {}]

-----------------------------------------------------------------------------
(* Operations: invoke, finish.                                             *)

Invoke(t) ==
    /\ th[t].pc = "Inv" /\ th[t].i <= Len(Work[t])
    /\ th' = [th EXCEPT ![t] = [Idle(th[t].i) EXCEPT
                !.pc = CASE Op(t)[1] = "ins" -> "I0" [] Op(t)[1] = "del" -> "D0" [] OTHER -> "R0",
                !.x = ItemOf(t, th[t].i)]]
    /\ eff' = [eff EXCEPT ![t] = 0]
    /\ fly' = [fly EXCEPT ![t] = NoFly]
    /\ UNCHANGED <<pm, fl, crashes, ab, out, wb>>

\* The result the thread finishes with (insert/delete: its CAS returned Ok and is durable).
Result(t) == CASE th[t].pc = "Ret" -> th[t].res
               [] th[t].pc \in {"IW", "DW"} -> 1
Finish(t) ==
    /\ th[t].pc = "Ret" \/ (th[t].pc \in {"IW", "DW"} /\ Durable(t))
    /\ out' = [out EXCEPT ![t] = Append(@, [op |-> Op(t)[1], res |-> Result(t), eff |-> eff[t]])]
    /\ th' = [th EXCEPT ![t] = IF th[t].i < Len(Work[t]) THEN Idle(th[t].i + 1)
                               ELSE [Idle(th[t].i) EXCEPT !.pc = "Done"]]
    /\ UNCHANGED <<pm, fl, fly, crashes, ab, eff, wb>>

Ret(t, r) == th' = [th EXCEPT ![t].pc = "Ret", ![t].res = r]

\* A detectable CAS by t on line ln from word old to word new (the code's first plain
\* CAS, L26): the thread's last one is durable, no other thread's is pending on ln.
DCas(t, ln, old, new) ==
    /\ Durable(t) /\ ~Busy(t, ln)
    /\ Vis(ln) = old
    /\ pm' = Write(pm, ln, new)
    /\ fly' = [fly EXCEPT ![t] = [ln |-> ln, j |-> Len(pm[ln].w) + 1]]
    /\ wb' = [wb EXCEPT ![t] = @ \cup {ln}]

\* A plain CAS (seal, done, link): the word must be stable (no detectable CAS pending).
PCas(t, ln, old, new) ==
    /\ Durable(t) /\ ~Busy(t, ln)
    /\ Vis(ln) = old
    /\ pm' = Write(pm, ln, new)
    /\ wb' = [wb EXCEPT ![t] = @ \cup {ln}]

-----------------------------------------------------------------------------
(* Insert (clevel.rs insert, place, free_slot).                            *)

\* insert L791: node := checkpoint_with(find(key) ? 0 : new_item) -- "present": false.
IFind(t) ==
    /\ th[t].pc = "I0" /\ KeySettled(t, Op(t)[2])
    /\ IF Present(Op(t)[2])
       THEN th' = [th EXCEPT ![t].pc = "Ret", ![t].res = 0, ![t].ck = "present"]
       ELSE th' = [th EXCEPT ![t].pc = "I1", ![t].ck = "item"]
    /\ UNCHANGED <<pm, fl, fly, crashes, ab, eff, out, wb>>

\* place L773: the detectable CAS 0 -> item on an empty slot free_slot chose.
IPlace(t, s) ==
    /\ th[t].pc = "I1" /\ Usable(s[1])
    /\ DCas(t, SLine(s), Empty, SW(th[t].x, FALSE, FALSE))
    /\ th' = [th EXCEPT ![t].pc = "IW"]
    /\ eff' = [eff EXCEPT ![t] = @ + 1]
    /\ ab' = ab \cup {Op(t)[2]}
    /\ UNCHANGED <<fl, crashes, out>>

-----------------------------------------------------------------------------
(* Delete (clevel.rs delete, find_unmarked, seal_moved).                   *)

\* find_unmarked returns None (the key is absent: no copy, marked or not, that is not done);
\* the target checkpoint [0, 0]: false.
DAbsent(t) ==
    /\ th[t].pc = "D0" /\ KeySettled(t, Op(t)[2])
    /\ ~Present(Op(t)[2])
    /\ th' = [th EXCEPT ![t].pc = "Ret", ![t].res = 0, ![t].ck = "absent"]
    /\ UNCHANGED <<pm, fl, fly, crashes, ab, eff, out, wb>>

\* seal_moved L695-L700: a marked copy of the item it found unmarked elsewhere is made done
\* (plain CAS marked -> done; the write-back and fence follow).
DSeal(t, s) ==
    LET w == SlotW(s) IN
    /\ th[t].pc = "D0" /\ w.it # 0 /\ w.mv /\ ~w.dn /\ KeyOf(w.it) = Op(t)[2]
    /\ \E s2 \in ChainSlots(VisMem) \ {s} :
         Holds(VisMem, s2, w.it) /\ ~SlotW(s2).mv /\ (ReadDurable => ~Busy(t, SLine(s2)))
    /\ PCas(t, SLine(s), w, SW(w.it, TRUE, TRUE))
    /\ UNCHANGED <<fl, th, fly, crashes, ab, eff, out>>

\* delete L817-L821: the detectable CAS item -> 0 on the unmarked slot it found, once every
\* marked copy of that item is durably done (seal_moved's write-back and fence).
DDel(t, s) ==
    LET w == SlotW(s) IN
    /\ th[t].pc = "D0" /\ InChain(s[1])
    /\ w.it # 0 /\ ~w.mv /\ KeyOf(w.it) = Op(t)[2]
    /\ \A s2 \in Slots \ {s} : (SlotW(s2).it = w.it /\ SlotW(s2).mv) => Dur(SLine(s2)).dn
    /\ DCas(t, SLine(s), w, Empty)
    /\ th' = [th EXCEPT ![t].pc = "DW"]
    /\ eff' = [eff EXCEPT ![t] = @ + 1]
    /\ ab' = ab \ {Op(t)[2]}
    /\ UNCHANGED <<fl, crashes, out>>

-----------------------------------------------------------------------------
(* Resize (clevel.rs resize: seal, mark, place, done, unlink).             *)

\* The loop's head (resize L857-L866): begin with the bottom level if it is to be drained, else
\* return whether a level was begun (its position checkpoint names it).
RHead(t) ==
    /\ th[t].pc = "R0" /\ (ReadDurable => ~Busy(t, LastLine))
    /\ IF Drainable
       THEN th' = [th EXCEPT ![t].pc = "R1", ![t].lv = Bottom, ![t].began = TRUE]
       ELSE th' = [th EXCEPT ![t].pc = "Ret", ![t].res = IF th[t].began THEN 1 ELSE 0]
    /\ UNCHANGED <<pm, fl, fly, crashes, ab, eff, out, wb>>

\* The level was unlinked by another resize: back to the head.
RLost(t) ==
    /\ th[t].pc = "R1" /\ Bottom # th[t].lv /\ (ReadDurable => ~Busy(t, LastLine))
    /\ th' = [th EXCEPT ![t].pc = "R0"]
    /\ UNCHANGED <<pm, fl, fly, crashes, ab, eff, out, wb>>

\* resize L882-L887: an empty slot is sealed (plain CAS 0 -> SEALED, then written back).
RSeal(t, s) ==
    /\ th[t].pc = "R1" /\ s[1] = th[t].lv /\ Bottom = th[t].lv
    /\ PCas(t, SLine(s), Empty, Sealed)
    /\ UNCHANGED <<fl, th, fly, crashes, ab, eff, out>>

\* resize L895-L897: an item is marked (take checkpoint, detectable CAS item -> item | MOVED).
RMark(t, s) ==
    LET w == SlotW(s) IN
    /\ th[t].pc = "R1" /\ s[1] = th[t].lv /\ Bottom = th[t].lv
    /\ w.it # 0 /\ ~w.mv
    /\ DCas(t, SLine(s), w, SW(w.it, TRUE, FALSE))
    /\ th' = [th EXCEPT ![t].pc = "RM", ![t].mv = s, ![t].x = w.it]
    /\ UNCHANGED <<fl, crashes, ab, eff, out>>

\* resize L907: the marked item is placed in a level not being drained (place's detectable CAS).
RPlace(t, s) ==
    /\ th[t].pc = "RM" /\ s[1] # th[t].lv /\ Usable(s[1])
    /\ DCas(t, SLine(s), Empty, SW(th[t].x, FALSE, FALSE))
    /\ th' = [th EXCEPT ![t].pc = "RP"]
    /\ UNCHANGED <<fl, crashes, ab, eff, out>>

\* resize L910-L912: the old slot is marked done (plain CAS; it fails if a delete did it).
RDone(t) ==
    LET s == th[t].mv
        w == SlotW(s) IN
    /\ th[t].pc = "RP" /\ Durable(t)
    /\ IF w = SW(th[t].x, TRUE, FALSE)
       THEN PCas(t, SLine(s), w, SW(th[t].x, TRUE, TRUE))
       ELSE UNCHANGED <<pm, wb>>
    /\ th' = [th EXCEPT ![t].pc = "R1", ![t].mv = <<0, 0>>, ![t].x = 0]
    /\ UNCHANGED <<fl, fly, crashes, ab, eff, out>>

\* resize L867-L879: every slot of the level sealed or done: the detectable CAS on `last`.
RUnlink(t) ==
    LET l == th[t].lv IN
    /\ th[t].pc = "R1" /\ Bottom = l /\ Len(Chain) > 1
    /\ \A s \in LevelSlots(l) : (SlotW(s) = Sealed \/ SlotW(s).dn) /\ (ReadDurable => ~Busy(t, SLine(s)))
    /\ DCas(t, LastLine, l, Chain[2])
    /\ th' = [th EXCEPT ![t].pc = "RU"]
    /\ UNCHANGED <<fl, crashes, ab, eff, out>>

RUnlinked(t) ==
    /\ th[t].pc = "RU" /\ Durable(t)
    /\ th' = [th EXCEPT ![t].pc = "R0"]
    /\ UNCHANGED <<pm, fl, fly, crashes, ab, eff, out, wb>>

-----------------------------------------------------------------------------
(* Growth (clevel.rs grow, next_of) and persistence.                       *)

\* grow L587-L592: a new level linked on top with a plain CAS 0 -> level | DIRTY
\* (free_slot found no empty slot: insert's and the move's place).
Grow(t) ==
    /\ th[t].pc \in {"I1", "RM"} /\ Top < Len(Size)
    /\ PCas(t, NLine(Top), LW(0, FALSE), LW(Top + 1, TRUE))
    /\ UNCHANGED <<fl, th, fly, crashes, ab, eff, out>>

\* grow L589 / next_of L535-L538: a dirty link, written back, gets its bit cleared.
LinkClean(t, l) ==
    LET w == Vis(NLine(l)) IN
    /\ Running(t) /\ w.dirty /\ Dur(NLine(l)).to = w.to
    /\ PCas(t, NLine(l), w, LW(w.to, FALSE))
    /\ UNCHANGED <<fl, th, fly, crashes, ab, eff, out>>

Dirty == {ln \in DOMAIN pm : Len(pm[ln].w) > pm[ln].m}

\* pwb of the lines S (one code line may hold several of the spec's): each persists up to
\* its current length at the thread's next fence.
PwbLines(t, S) ==
    /\ fl' = [fl EXCEPT ![t] = @ \cup {<<ln, Len(pm[ln].w)>> : ln \in S}]
    /\ wb' = [wb EXCEPT ![t] = @ \ S]
    /\ UNCHANGED <<pm, th, fly, crashes, ab, eff, out>>
Pwb(t, ln) == PwbLines(t, {ln})

\* Next writes back the lines the thread wrote, and another thread's pending detectable CAS
\* (LOADHELP's write-back).
PwbDue(t, ln) == ln \in wb[t] \/ Busy(t, ln)

Max(a, b) == IF a > b THEN a ELSE b
\* pfence: the thread's write-backs take effect.  A line's words before its new mark can no
\* longer be in any crash image: they are dropped (positions in fl and fly move down with
\* them; a detectable CAS's write at or before the mark is durable, j = 0).
NewMark(t, ln) ==
    LET ns == {p[2] : p \in {q \in fl[t] : q[1] = ln}} IN
    IF ns = {} THEN pm[ln].m ELSE Max(pm[ln].m, CHOOSE n \in ns : \A n2 \in ns : n2 <= n)
\* Lines persisted up to new marks (d[ln] words dropped from each line), t's write-backs done.
MarksTo(t, d) ==
    /\ pm' = [ln \in DOMAIN pm |-> [w |-> SubSeq(pm[ln].w, d[ln] + 1, Len(pm[ln].w)), m |-> 1]]
    /\ fl' = [u \in Threads |-> IF u = t THEN {}
                               ELSE {<<q[1], q[2] - d[q[1]]>> : q \in {q2 \in fl[u] : q2[2] > d[q2[1]] + 1}}]
    /\ fly' = [u \in Threads |-> IF fly[u].j <= d[fly[u].ln] + 1 THEN NoFly
                                ELSE [fly[u] EXCEPT !.j = @ - d[fly[u].ln]]]
Fence(t) ==
    /\ MarksTo(t, [ln \in DOMAIN pm |-> NewMark(t, ln) - 1])
    /\ UNCHANGED <<th, crashes, ab, eff, out, wb>>

\* Next's write-back: a pwb of line ln and the thread's fence in one step (clflush).  Between
\* a pwb and its fence Px86 lets the line persist as it was at the pwb; the same content
\* persists if this step is taken at the pwb's point, so the images Next reaches are those of
\* separate Pwb and Fence steps (the trace replays those).  t has no write-back pending.
Flush(t, ln) ==
    /\ fl[t] = {}
    /\ MarksTo(t, [l2 \in DOMAIN pm |-> IF l2 = ln THEN Len(pm[ln].w) - 1 ELSE 0])
    /\ wb' = [wb EXCEPT ![t] = @ \ {ln}]
    /\ UNCHANGED <<th, crashes, ab, eff, out>>

-----------------------------------------------------------------------------
(* Full crash, attach, recovery.                                           *)

MaxLen == LET ls == {Len(pm[ln].w) : ln \in DOMAIN pm} IN CHOOSE x \in ls : \A y \in ls : y <= x
Images == {c \in [Dirty -> 1 .. MaxLen] : \A ln \in Dirty : pm[ln].m <= c[ln] /\ c[ln] <= Len(pm[ln].w)}
Pick(c, ln) == IF ln \in Dirty THEN c[ln] ELSE Len(pm[ln].w)
ImageOf(c) == [ln \in DOMAIN pm |-> pm[ln].w[Pick(c, ln)]]

\* attach L436-L456: in the image's chain, a marked slot not done is done if its item is
\* present unmarked elsewhere (placed), else unmarked.
Attach(m) ==
    LET cs == ChainSlots(m) IN
    [ln \in LineIds |->
       IF ln[1] = "s" /\ <<ln[2], ln[3]>> \in cs /\ m[ln].mv /\ ~m[ln].dn /\ m[ln].it # 0
       THEN IF \E s2 \in cs : SLine(s2) # ln /\ Holds(m, s2, m[ln].it) /\ ~m[SLine(s2)].mv
            THEN SW(m[ln].it, TRUE, TRUE) ELSE SW(m[ln].it, FALSE, FALSE)
       ELSE m[ln]]

\* Did t's last detectable CAS survive in image c?
Kept(t, c) == fly[t].j = 0 \/ Pick(c, fly[t].ln) >= fly[t].j

\* The thread's operation after the crash (recovery mode): an insert or delete whose CAS
\* stands returns true; a checkpointed "present"/"absent" returns false; an insert with its
\* item checkpointed places it; otherwise the operation runs again; a resize resumes at its
\* loop head (its position checkpoint: began).
Recovered(t, e) ==
    LET r == th[t] IN
    IF ~Running(t) THEN r
    ELSE CASE Op(t)[1] = "rsz" -> [r EXCEPT !.pc = IF r.pc = "Ret" THEN "Ret" ELSE "R0",
                                             !.mv = <<0, 0>>, !.lv = 0]
           [] e = 1 -> [r EXCEPT !.pc = "Ret", !.res = 1]
           [] r.ck \in {"present", "absent"} -> [r EXCEPT !.pc = "Ret", !.res = 0]
           [] r.ck = "item" -> [r EXCEPT !.pc = "I1"]
           [] OTHER -> [r EXCEPT !.pc = IF Op(t)[1] = "ins" THEN "I0" ELSE "D0"]

\* Effects lost with the image: the CAS of an insert or delete the image did not keep.
Lost(t, c) == Running(t) /\ Op(t)[1] \in {"ins", "del"} /\ eff[t] = 1 /\ ~Kept(t, c)

CrashWith(c) ==
    LET img == Attach(ImageOf(c))
        e == [t \in Threads |-> IF Lost(t, c) THEN 0 ELSE eff[t]] IN
    /\ pm' = [ln \in LineIds |-> InitLine(img[ln])]
    /\ eff' = e
    /\ ab' = (ab \ {Op(t)[2] : t \in {u \in Threads : Lost(u, c) /\ Op(u)[1] = "ins"}})
             \cup {Op(t)[2] : t \in {u \in Threads : Lost(u, c) /\ Op(u)[1] = "del"}}
    /\ th' = [t \in Threads |-> Recovered(t, e[t])]
    /\ fly' = [t \in Threads |-> NoFly]
    /\ fl' = [t \in Threads |-> {}]
    /\ crashes' = crashes + 1
    /\ wb' = [t \in Threads |-> {}]
    /\ UNCHANGED out

Crash ==
    /\ crashes < MaxCrashes /\ \E t \in Threads : Running(t)
    /\ \E c \in Images : CrashWith(c)

-----------------------------------------------------------------------------

\* Next places only where free_slot looks first: the first empty slot (lowest index) of the
\* highest usable level with one, levels being drained left out. FreeSlots is that slot (a set
\* of one), or no slot when no usable level has an empty one.
EmptyIn(l) == {s \in LevelSlots(l) : SlotW(s) = Empty}
FreeSlots ==
    LET ls == {l \in Levels : Usable(l) /\ EmptyIn(l) # {} /\ ~(Drainable /\ l = Bottom)}
        top == CHOOSE l \in ls : \A l2 \in ls : l2 <= l
        js == {x[2] : x \in EmptyIn(top)}
    IN IF ls = {} THEN {} ELSE {<<top, CHOOSE j \in js : \A j2 \in js : j <= j2>>}

Next ==
    \/ \E t \in Threads :
         \/ Invoke(t) \/ Finish(t)
         \/ IFind(t) \/ DAbsent(t) \/ RHead(t) \/ RLost(t) \/ RDone(t) \/ RUnlink(t)
         \/ RUnlinked(t) \/ Grow(t)
         \/ \E s \in Slots : DSeal(t, s) \/ DDel(t, s) \/ RSeal(t, s) \/ RMark(t, s)
         \/ th[t].pc \in {"I1", "RM"} /\ \E s \in FreeSlots : IPlace(t, s) \/ RPlace(t, s)
         \/ \E l \in Levels : LinkClean(t, l)
         \/ \E ln \in Dirty : Running(t) /\ PwbDue(t, ln) /\ Flush(t, ln)
    \/ Crash

Spec == Init /\ [][Next]_vars

\* (Next's free_slot: the first empty slot of the highest usable level not being drained,
\* clevel.rs's top-first order; IPlace and RPlace themselves take any empty slot, as a
\* stale view may, and the trace replay uses them so.)

-----------------------------------------------------------------------------
(* Properties.                                                             *)

Word == [it : {0} \cup Items, mv : BOOLEAN, dn : BOOLEAN]
TypeOK ==
    /\ \A ln \in LineIds : Len(pm[ln].w) >= 1 /\ pm[ln].m \in 1 .. Len(pm[ln].w)
    /\ \A s \in Slots : SlotW(s) \in Word
    /\ Vis(LastLine) \in Levels
    /\ \A t \in Threads :
         /\ th[t].pc \in {"Inv", "Done", "Ret", "I0", "I1", "IW", "D0", "DW",
                          "R0", "R1", "RM", "RP", "RU"}
         /\ th[t].i \in DOMAIN Work[t]
         /\ eff[t] \in 0 .. 2
    /\ crashes \in 0 .. MaxCrashes

\* No key has two items present; no item is present unmarked in two slots.
NoDuplicate ==
    LET m == VisMem
        live == LiveItems(m)
        cs == ChainSlots(m) IN
    /\ \A x, y \in live : KeyOf(x) = KeyOf(y) => x = y
    /\ \A x \in Items : Cardinality({s \in cs : Holds(m, s, x) /\ ~m[SLine(s)].mv}) <= 1

\* The table holds exactly the keys the operations' effects say (after a crash: those
\* whose effects the image kept).
Agree == Contents(VisMem) = ab

\* Each insert or delete took effect at most once.
ExactlyOnce == \A t \in Threads : eff[t] <= 1

\* Every finished insert or delete reports true iff it took effect.
Detectable ==
    \A t \in Threads : \A j \in DOMAIN out[t] :
        out[t][j].op \in {"ins", "del"} => (out[t][j].res = 1 <=> out[t][j].eff = 1)
=============================================================================
