package main

import (
	"cmp"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"maps"
	"os"
	"slices"
)

// shrink rewrites a screenshot as a PNG of at most 256 colours, the page's
// most frequent ones (its flat backgrounds, text and series colours keep
// their exact values; anti-aliased edges take the nearest), which keeps the
// README's picture a fraction of its full-colour size.
func shrink(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		return err
	}
	counts := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	byUse := slices.SortedFunc(maps.Keys(counts), func(a, b color.RGBA) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a.R, b.R), cmp.Compare(a.G, b.G), cmp.Compare(a.B, b.B))
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range byUse[:min(len(byUse), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	draw.Draw(out, b, img, b.Min, draw.Src)
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(w, out); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
