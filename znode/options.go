package znode

// OptionBits are Options as a transaction carries them (Txn.Options): one
// byte, the leader's, so that a member started with other settings still
// applies every write as the others do. Zero means "not stamped": apply
// with the tree's own Options (the entries of format 1).
type OptionBits byte

const (
	optStamped       OptionBits = 1 << 7 // set in every stamped value
	optSkipACL       OptionBits = 1 << 0
	optExtendedTypes OptionBits = 1 << 1
	optEnforceQuota  OptionBits = 1 << 2
	optKnown                    = optStamped | optSkipACL | optExtendedTypes | optEnforceQuota
)

// Options returns the tree's own options: those its reads, and the writes
// whose transactions carry none (Txn.Options), go by.
func (t *Tree) Options() Options { return t.opts }

// Bits returns o as a transaction carries it.
func (o Options) Bits() OptionBits {
	b := optStamped
	if o.SkipACL {
		b |= optSkipACL
	}
	if o.ExtendedTypes {
		b |= optExtendedTypes
	}
	if o.EnforceQuota {
		b |= optEnforceQuota
	}
	return b
}

// Options returns the options b stands for; ok is false for zero (none
// stamped).
func (b OptionBits) Options() (o Options, ok bool) {
	if b&optStamped == 0 {
		return Options{}, false
	}
	return Options{SkipACL: b&optSkipACL != 0, ExtendedTypes: b&optExtendedTypes != 0, EnforceQuota: b&optEnforceQuota != 0}, true
}

// valid reports bits a decoder accepts: zero, or stamped with known bits.
func (b OptionBits) valid() bool {
	return b == 0 || b&optStamped != 0 && b&^optKnown == 0
}

// StampOptions sets the options of the encoded transaction txn (as Encode
// wrote it) to b in place, and reports whether it could: format 1
// transactions have no room for them. The leader stamps every write it
// appends, without decoding it.
func StampOptions(txn []byte, b OptionBits) bool {
	if len(txn) < 2 || txn[0] != txnFormat {
		return false
	}
	txn[1] = byte(b)
	return true
}
