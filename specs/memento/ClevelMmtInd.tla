----------------------------- MODULE ClevelMmtInd -----------------------------
(***************************************************************************)
(* Inductiveness of Clevel-mmt's safety properties (issue 20, §4).         *)
(* ClevelMmt.cfg checks NoDuplicate, Agree, ExactlyOnce and Detectable on  *)
(* the states reachable within its bounds; this module states them,        *)
(* strengthened, as an inductive invariant IndInv, and ClevelMmtInd.cfg    *)
(* checks                                                                  *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC as CheckpointInd and InsDelQueueInd do: INIT IndInit is every  *)
(* state of a bounded domain (IndDomain) that satisfies IndInv, not only   *)
(* the reachable ones; NEXT is ClevelMmt's own Next; the INVARIANT is      *)
(* IndInv; the ACTION_CONSTRAINT IndDomain (on the source state only)      *)
(* keeps TLC from expanding successors that leave the domain, which it     *)
(* still checks against IndInv.                                            *)
(*                                                                         *)
(* THE SUB-CONFIGURATION (what this does NOT cover).  CI's work (thread 1  *)
(* deletes the bulk-loaded key 3; thread 2 inserts key 2, then rehashes)   *)
(* on a table of two levels, the bottom one of 1 slot (key 3's item at     *)
(* creation) and the top one of 4 (IndSize = <<1, 4>>: the bottom level is *)
(* drainable from the start, clevel.rs's quarter threshold), full crashes, *)
(* the readers' guard (ReadDurable).  With no third level there is no      *)
(* growth: Grow and LinkClean never fire and the links are constants here  *)
(* (ClevelMmt.cfg's levels of 1, 2, 4 slots check growth by exploration).  *)
(* One resize, so RLost never fires; one crash, so no recovery is cut off  *)
(* (ClevelMmt_2C_deep.cfg and ClevelMmt_3T_deep.cfg explore those).        *)
(*                                                                         *)
(* THE DOMAIN (IndDomain).  Next never issues a pwb apart from its fence   *)
(* (Flush), so every line has its mark at its first word (`m` = 1) and     *)
(* `fl` is empty; each line holds its persisted word and at most one       *)
(* pending word (IndInv's shapes below).  The crash counter is 0 (a state  *)
(* whose crash is used up has the same successors minus Crash).  `wb` is   *)
(* only Next's bound on which lines a thread writes back (Flush; Pwb      *)
(* itself may write back any line): the domain lets each thread write     *)
(* back every dirty line (wb = Dirty), which allows every write-back a     *)
(* smaller wb allows, and IndInv does not read wb.  Registers a label      *)
(* never reads before writing them (a resize's x at R0, R1, RU and Ret,    *)
(* its lv at R0 and Ret) are at one value, Invoke's (T2Canon); IndInv      *)
(* allows every value Next leaves in them, so a successor with another is  *)
(* checked, and its twin with Invoke's value is expanded.                  *)
(*                                                                         *)
(* THE STRENGTHENING (B = the bottom slot, I3 = key 3's item, I2 = key 2's *)
(* item that thread 2 inserts):                                            *)
(*  - shapes: B holds I3, then I3 marked, then I3 done (the move), or I3,  *)
(*    then empty, then SEALED (deleted before the rehash); a top slot is  *)
(*    empty, I2, or I3's copy, then empty again; `last` is 1, then 2; a    *)
(*    line's pending word is the next one of its shape; each item is in at *)
(*    most one top slot;                                                   *)
(*  - a pending word written by a detectable CAS is its thread's `fly`     *)
(*    (the thread is waiting for it), every other pending word is a plain  *)
(*    CAS's (seal, done);                                                  *)
(*  - per thread and label: the ghosts (eff, out, ab's key) as the labels  *)
(*    say: key 3 is in ab iff thread 1 has not deleted it, key 2 iff       *)
(*    thread 2's insert took effect, and nobody has written I2 before;     *)
(*    the rehash has touched nothing before it began; at RM, B is marked   *)
(*    and no copy exists, at RP the mark is persisted; a marked B in the   *)
(*    chain means a move in flight (RM, RP);                               *)
(*  - CrashSafe: every image a full crash may leave, after attach, holds   *)
(*    exactly the keys ab holds once the effects the image lost are taken  *)
(*    back, with no duplicate (what Crash needs to keep Agree and          *)
(*    NoDuplicate; the other steps must keep it).                          *)
(*                                                                         *)
(* Not vacuous: mutants/ClevelMmtIndReadUndurable.cfg (ReadDurable =       *)
(* FALSE, the unguarded readers of mutants/ClevelMmtReadUndurable.cfg)     *)
(* gets a successor breaking IndInv.                                       *)
(***************************************************************************)
EXTENDS ClevelMmt

\* The sub-configuration IndInit builds (ClevelMmtInd.cfg).
IndSize == <<1, 4>>
ASSUME NThreads = 2 /\ Work = CIWork /\ Size = IndSize /\ Pre = CIPre /\ MaxCrashes = 1

T1 == 1                      \* deletes key 3
T2 == 2                      \* inserts key 2, then rehashes
B == <<1, 0>>                \* the bottom level's slot
I3 == PreItem(1)             \* key 3's item (bulk-loaded in B)
I2 == ItemOf(2, 1)           \* key 2's item
U(x) == SW(x, FALSE, FALSE)
Mk(x) == SW(x, TRUE, FALSE)
Dn(x) == SW(x, TRUE, TRUE)
TopSlots == LevelSlots(2)

Pend(ln) == Len(pm[ln].w) = 2
PW(ln) == pm[ln].w[1]                              \* the persisted word
HasIn(ln, x) == \E k \in DOMAIN pm[ln].w : pm[ln].w[k].it = x
NoCopyOf(x) == \A s \in TopSlots : ~HasIn(SLine(s), x)

-----------------------------------------------------------------------------
(* Shapes of the lines.                                                    *)

BShapes == {<<U(I3)>>, <<U(I3), Mk(I3)>>, <<Mk(I3)>>, <<Mk(I3), Dn(I3)>>, <<Dn(I3)>>,
            <<U(I3), Empty>>, <<Empty>>, <<Empty, Sealed>>, <<Sealed>>}
TopShapes == {<<Empty>>, <<Empty, U(I2)>>, <<U(I2)>>, <<Empty, U(I3)>>, <<U(I3)>>, <<U(I3), Empty>>}
LastShapes == {<<1>>, <<1, 2>>, <<2>>}
Links == [l \in Levels |-> LW(IF l = 1 THEN 2 ELSE 0, FALSE)]

ShapeOK ==
    /\ \A ln \in LineIds : pm[ln].m = 1
    /\ pm[SLine(B)].w \in BShapes
    /\ \A s \in TopSlots : pm[SLine(s)].w \in TopShapes
    /\ pm[LastLine].w \in LastShapes
    /\ \A l \in Levels : pm[NLine(l)].w = <<Links[l]>>
    /\ \A x \in {I2, I3} : Cardinality({s \in TopSlots : HasIn(SLine(s), x)}) <= 1
    /\ fl = [t \in Threads |-> {}]

\* The thread whose detectable CAS wrote ln's pending word (0: none, or a plain CAS's:
\* seal_moved's or the move's done mark, the rehash's SEALED).
DOwner(ln) ==
    IF ~Pend(ln) THEN 0
    ELSE IF ln = LastLine THEN T2                                  \* RUnlink
    ELSE IF ln = SLine(B) THEN CASE pm[ln].w[2] = Mk(I3) -> T2      \* RMark
                                 [] pm[ln].w[2] = Empty -> T1        \* DDel
                                 [] OTHER -> 0
    ELSE IF pm[ln].w[2] = Empty THEN T1 ELSE T2                     \* DDel; IPlace, RPlace
FlyOf(t) == IF \E ln \in LineIds : DOwner(ln) = t
            THEN [ln |-> CHOOSE ln \in LineIds : DOwner(ln) = t, j |-> 2]
            ELSE NoFly
FlyOK ==
    /\ \A t \in Threads : Cardinality({ln \in LineIds : DOwner(ln) = t}) <= 1
    /\ fly = [t \in Threads |-> FlyOf(t)]
    \* the thread waits for it at the label after its detectable CAS
    /\ fly[T1] # NoFly => th[T1].pc = "DW"
    /\ fly[T2] # NoFly => th[T2].pc = CASE fly[T2].ln = LastLine -> "RU"
                                        [] fly[T2].ln = SLine(B) -> "RM"
                                        [] Vis(fly[T2].ln).it = I2 -> "IW"
                                        [] OTHER -> "RP"

-----------------------------------------------------------------------------
(* The threads.                                                            *)

H1(p) == [Idle(1) EXCEPT !.pc = p, !.x = ItemOf(1, 1)]
T1States == {Idle(1), H1("D0"), H1("DW"), [H1("Ret") EXCEPT !.res = 1], [Idle(1) EXCEPT !.pc = "Done"]}

H2(p) == [Idle(1) EXCEPT !.pc = p, !.x = I2]
R(p, lv, mv, x, b, res) ==
    [Idle(2) EXCEPT !.pc = p, !.lv = lv, !.mv = mv, !.x = x, !.began = b, !.res = res]
Xs == {ItemOf(2, 2), 0, I3}               \* what Invoke, RDone and a move leave in x
T2States ==
    {Idle(1), H2("I0"), [H2("I1") EXCEPT !.ck = "item"], [H2("IW") EXCEPT !.ck = "item"],
     [H2("Ret") EXCEPT !.ck = "item", !.res = 1], Idle(2), [Idle(2) EXCEPT !.pc = "Done"]}
    \cup {R("R0", lv, <<0, 0>>, x, b, 0) : lv \in {0, 1}, x \in Xs, b \in BOOLEAN}
    \cup {R(p, 1, <<0, 0>>, x, TRUE, 0) : p \in {"R1", "RU"}, x \in Xs}
    \cup {R(p, 1, B, I3, TRUE, 0) : p \in {"RM", "RP"}}
    \cup {R("Ret", lv, <<0, 0>>, x, TRUE, 1) : lv \in {0, 1}, x \in Xs}

\* The domain's thread 2: the registers a label never reads before it writes them (x at R0,
\* R1, RU and Ret; lv at R0 and Ret) at one value, Invoke's.
X0 == ItemOf(2, 2)
T2Canon == {h \in T2States : /\ h.pc \in {"R0", "R1", "RU", "Ret"} /\ h.i = 2 => h.x = X0
                             /\ h.pc \in {"R0", "Ret"} /\ h.i = 2 => h.lv = 0}

InsOut == [op |-> "ins", res |-> 1, eff |-> 1]
\* Thread 2's insert took effect (IPlace).
Inserted == th[T2].i = 2 \/ th[T2].pc \in {"IW", "Ret"}
\* Thread 2's resize began (RHead found the bottom level drainable).
Began == th[T2].i = 2 /\ (th[T2].began \/ th[T2].pc = "Done")

T1Inv ==
    LET h == th[T1] IN
    /\ h \in T1States
    /\ eff[T1] = IF h.pc \in {"DW", "Ret", "Done"} THEN 1 ELSE 0
    /\ out[T1] = IF h.pc = "Done" THEN <<[op |-> "del", res |-> 1, eff |-> 1]>> ELSE <<>>
    /\ (3 \in ab) <=> h.pc \in {"Inv", "D0"}

T2Inv ==
    LET h == th[T2] IN
    /\ h \in T2States
    /\ eff[T2] = IF (h.i = 1 /\ h.pc \in {"IW", "Ret"}) \/ (h.i = 2 /\ h.pc = "Inv") THEN 1 ELSE 0
    /\ out[T2] = CASE h.i = 1 -> <<>>
                   [] h.pc = "Done" -> <<InsOut, [op |-> "rsz", res |-> 1, eff |-> 0]>>
                   [] OTHER -> <<InsOut>>
    /\ (2 \in ab) <=> Inserted
    /\ ~Inserted => NoCopyOf(I2)
    \* the rehash touched nothing before it began
    /\ ~Began => /\ pm[SLine(B)].w \in {<<U(I3)>>, <<U(I3), Empty>>, <<Empty>>}
                 /\ pm[LastLine].w = <<1>> /\ NoCopyOf(I3)
    /\ h.pc \in {"R1", "RM", "RP"} => pm[LastLine].w = <<1>>
    /\ h.pc = "RM" => Vis(SLine(B)) = Mk(I3) /\ NoCopyOf(I3)
    /\ h.pc = "RP" => /\ PW(SLine(B)) \in {Mk(I3), Dn(I3)}
                      \* the copy is placed, unless thread 1 deleted it (after B's done mark)
                      /\ 3 \in ab => \E s \in TopSlots : Vis(SLine(s)) = U(I3)
                      /\ 3 \notin ab => PW(SLine(B)) = Dn(I3)
    /\ h.pc = "RU" => Vis(LastLine) = 2 /\ Vis(SLine(B)) \in {Sealed, Dn(I3)}
    \* a marked B in the chain: a move in flight
    /\ (Vis(SLine(B)) = Mk(I3) /\ PW(LastLine) = 1) => h.pc \in {"RM", "RP"}

-----------------------------------------------------------------------------
(* CrashSafe: every image a full crash may leave (S: the dirty lines whose *)
(* pending word it keeps), after attach.                                   *)

ImgOf(S) == [ln \in LineIds |-> IF ln \in S THEN Vis(ln) ELSE PW(ln)]
KeptIn(t, S) == fly[t].j = 0 \/ fly[t].ln \in S
LostIn(t, S) == Running(t) /\ Op(t)[1] \in {"ins", "del"} /\ eff[t] = 1 /\ ~KeptIn(t, S)
AbAfter(S) == (ab \ {Op(t)[2] : t \in {u \in Threads : LostIn(u, S) /\ Op(u)[1] = "ins"}})
              \cup {Op(t)[2] : t \in {u \in Threads : LostIn(u, S) /\ Op(u)[1] = "del"}}
NoDupIn(m) ==
    LET live == LiveItems(m)
        cs == ChainSlots(m) IN
    /\ \A x, y \in live : KeyOf(x) = KeyOf(y) => x = y
    /\ \A x \in Items : Cardinality({s \in cs : Holds(m, s, x) /\ ~m[SLine(s)].mv}) <= 1
CrashSafe ==
    \A S \in SUBSET Dirty :
        LET img == Attach(ImgOf(S)) IN Contents(img) = AbAfter(S) /\ NoDupIn(img)

\* (Ordered so that IndInit's filter fails early: the cheap label conjuncts first.)
IndInv ==
    /\ FlyOK
    /\ T1Inv
    /\ T2Inv
    /\ ShapeOK
    /\ Agree /\ NoDuplicate /\ ExactlyOnce /\ Detectable
    /\ TypeOK
    /\ CrashSafe

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

IndDomain ==
    /\ crashes = 0
    /\ wb = [t \in Threads |-> Dirty]
    /\ th[T1] \in T1States /\ th[T2] \in T2Canon

\* Top level contents: key 2's item and key 3's copy each in at most one top slot.
TopLines(p2, w2, p3, w3) ==
    [s \in TopSlots |-> IF s[2] = p2 THEN w2 ELSE IF s[2] = p3 THEN w3 ELSE <<Empty>>]
I2Words == {<<Empty, U(I2)>>, <<U(I2)>>}
I3Words == {<<Empty, U(I3)>>, <<U(I3)>>, <<U(I3), Empty>>}
NoPos == Size[2]                         \* in no top slot
Pos == 0 .. NoPos

\* IndInit: every IndInv state of the domain; memory first, each choice filtered by the
\* parts of IndInv it decides, then the threads and their ghosts.
IndInit ==
    /\ crashes = 0
    /\ fl = [t \in Threads |-> {}]
    /\ \E lw \in LastShapes, bw \in BShapes, p2 \in Pos, w2 \in I2Words, p3 \in Pos, w3 \in I3Words :
         /\ p2 = NoPos => w2 = <<U(I2)>>
         /\ p3 = NoPos => w3 = <<U(I3)>>
         /\ p2 # NoPos => p2 # p3
         /\ LET top == TopLines(p2, w2, p3, w3) IN
            pm = [ln \in LineIds |->
                    CASE ln = LastLine -> [w |-> lw, m |-> 1]
                      [] ln[1] = "n" -> InitLine(Links[ln[2]])
                      [] ln = SLine(B) -> [w |-> bw, m |-> 1]
                      [] OTHER -> [w |-> top[<<ln[2], ln[3]>>], m |-> 1]]
         /\ \A t \in Threads : Cardinality({ln \in LineIds : DOwner(ln) = t}) <= 1
         /\ fly = [t \in Threads |-> FlyOf(t)]
         /\ wb = [t \in Threads |-> Dirty]
         /\ \E h1 \in T1States, h2 \in T2Canon :
              /\ th = [t \in Threads |-> IF t = T1 THEN h1 ELSE h2]
              /\ eff = [t \in Threads |->
                          IF t = T1 THEN (IF h1.pc \in {"DW", "Ret", "Done"} THEN 1 ELSE 0)
                          ELSE IF (h2.i = 1 /\ h2.pc \in {"IW", "Ret"}) \/ (h2.i = 2 /\ h2.pc = "Inv")
                               THEN 1 ELSE 0]
              /\ out = [t \in Threads |->
                          IF t = T1 THEN (IF h1.pc = "Done" THEN <<[op |-> "del", res |-> 1, eff |-> 1]>>
                                          ELSE <<>>)
                          ELSE CASE h2.i = 1 -> <<>>
                                 [] h2.pc = "Done" -> <<InsOut, [op |-> "rsz", res |-> 1, eff |-> 0]>>
                                 [] OTHER -> <<InsOut>>]
              /\ ab = (IF h1.pc \in {"Inv", "D0"} THEN {3} ELSE {})
                      \cup (IF h2.i = 2 \/ h2.pc \in {"IW", "Ret"} THEN {2} ELSE {})
              /\ IndInv
=============================================================================
