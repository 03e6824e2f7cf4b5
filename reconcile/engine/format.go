package engine

// GiB is the bytes of a cloud's GB: GCE's disk sizes and quotas and the
// clouds' storage prices count GiB.
const GiB = 1 << 30
