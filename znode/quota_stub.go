package znode

// quotaChanged accounts a node creation (+1) or deletion (-1) of bytes data
// bytes at path against quotas. Quotas are not implemented yet.
func (t *Tree) quotaChanged(path, name string, count int, bytes int64) {}

// quotaBytes accounts a data size change at path against quotas.
func (t *Tree) quotaBytes(path string, delta int64) {}

// checkQuota reports jute.ErrQuotaExceeded when Options.EnforceQuota is set
// and adding count nodes and bytes bytes at path would pass a hard limit.
func (t *Tree) checkQuota(path string, count int, bytes int64) error { return nil }

// rebuildQuotas recomputes quota state after a snapshot load.
func (t *Tree) rebuildQuotas() {}
