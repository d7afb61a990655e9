//! The audio jitter buffer: frames by RTP sequence number, played out in order, a lost
//! frame concealed (by the next frame's FEC when it is there).
