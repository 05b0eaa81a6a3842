package scenarios

import "testing"

// A decode rank's transfer is its whole share of the request, whatever
// the two TP sizes: where prefill splits the heads finer, the rank reads
// the same blocks from several prefill ranks, smaller each.
func TestLayoutRankBytes(t *testing.T) {
	for _, c := range []struct {
		name                string
		prefillTP, decodeTP int
		block               int64
		remote              int
	}{
		{"same TP", 2, 2, 16 * 4 * 128 * 2, 1},
		{"prefill finer", 8, 2, 16 * 1 * 128 * 2, 4},
		{"decode finer", 2, 8, 16 * 1 * 128 * 2, 1},
		{"TP beyond the heads", 16, 1, 16 * 1 * 128 * 2, 8},
	} {
		s := Serving{Layers: 80, KVHeads: 8, HeadDim: 128, PrefillTP: c.prefillTP, DecodeTP: c.decodeTP, BlockTokens: 16}
		l := s.Layout(2)
		if l.BlockBytes != c.block || l.RemoteRanks != c.remote {
			t.Errorf("%s: block %d B from %d ranks; want %d B from %d", c.name, l.BlockBytes, l.RemoteRanks, c.block, c.remote)
		}
		const tokens = 1024
		moved := int64(l.Descriptors(tokens)) * l.BlockBytes
		share := int64(float64(int64(tokens)*l.BytesPerToken) * l.RankShare)
		if moved != share {
			t.Errorf("%s: the leg moves %d B; the rank's share is %d B", c.name, moved, share)
		}
	}
}
