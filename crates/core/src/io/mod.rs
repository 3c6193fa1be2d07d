//! Readers and writers: Matrix Market, edge lists (SNAP / ABC), NumPy `.npy`.
