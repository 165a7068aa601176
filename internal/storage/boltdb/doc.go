// Package boltdb is the durable store: the mvcc engine over one bucket of
// a bbolt file.
//
// Every group commit of the engine is one bolt read-write transaction,
// committed with fsync (bolt's default, NoSync=false), so a write is
// acknowledged only once it is on disk, and after a crash the reopened file
// holds every acknowledged write (and possibly some later ones whose
// acknowledgement was lost). Reads are bolt read transactions, isolated
// snapshots that never block the writer while the data fits in the
// initial memory map (Options.InitialMmapSize).
//
// The file is locked while open: a second Open, in this or another
// process, waits up to Options.LockTimeout and fails. The freelist is not
// written by commits and is rebuilt when the file is opened. Stats reports
// the size of the file's data.
package boltdb
