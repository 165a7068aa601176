// Package allocator hands out unique values from a range — service cluster
// IPs and node ports — by claiming them in storage.
//
// A claim is a storage key under the range's prefix, created with
// create-if-absent, so two allocators sharing a store (several API servers
// on etcd) never hand out the same value. Release deletes the claim.
// A claim whose owner never got written (a crash between claim and create)
// stays taken: the range is large, and a later repair pass can free it;
// nothing is handed out twice.
package allocator
