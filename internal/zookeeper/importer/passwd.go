package importer

// zkSuperSecret is ZooKeeperServer.superSecret.
const zkSuperSecret = 0xB3415C00

// Passwd is the password Apache ZooKeeper gives session id:
// ZooKeeperServer.generatePasswd, 16 bytes of java.util.Random seeded
// with id ^ superSecret. A resumed session must present it, so sessions
// carried over keep it (zkraft's own sessions get random passwords).
func Passwd(id int64) []byte {
	r := javaRandom((id ^ zkSuperSecret ^ 0x5DEECE66D) & (1<<48 - 1))
	p := make([]byte, 16)
	for i := 0; i < len(p); {
		v := r.nextInt()
		for n := min(len(p)-i, 4); n > 0; n-- {
			p[i] = byte(v)
			v >>= 8
			i++
		}
	}
	return p
}

// javaRandom is java.util.Random's 48-bit linear congruential generator,
// its seed already scrambled.
type javaRandom int64

// nextInt is Random.next(32).
func (r *javaRandom) nextInt() int32 {
	*r = (*r*0x5DEECE66D + 0xB) & (1<<48 - 1)
	return int32(int64(*r) >> 16)
}
