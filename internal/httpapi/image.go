package httpapi

import (
	"encoding/base64"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// userContent collects a user message's text and images in the order the
// client wrote them, one part per content part or block, so that a part's
// index is its content part's.
type userContent struct {
	texts  []string
	parts  []*llmrelayv1.Part
	images bool
}

func (u *userContent) text(s string) {
	u.texts = append(u.texts, s)
	u.parts = append(u.parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_Text{Text: s}})
}

func (u *userContent) image(img *llmrelayv1.Image) {
	u.images = true
	u.parts = append(u.parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_Image{Image: img}})
}

// fill sets m's content, and its parts when it has images: without
// images, the text parts joined by newlines, as before images (no parts);
// with them, the parts in order and the text parts concatenated as they
// are, which the contract's parts require (Message.parts).
func (u *userContent) fill(m *llmrelayv1.Message) {
	if !u.images {
		m.Content = strings.Join(u.texts, "\n")
		return
	}
	m.Content = strings.Join(u.texts, "")
	m.Parts = u.parts
}

// openAIImage reads an image as OpenAI's formats give it, by URL with a
// detail (Chat Completions' image_url part, the Responses API's
// input_image part): imageOfURL's image with the detail. Its errors name
// urlAt or detailAt, the members that hold the URL and the detail in the
// format's part.
func openAIImage(url, detail, urlAt, detailAt string) (*llmrelayv1.Image, error) {
	if url == "" {
		return nil, &paramError{urlAt, "is required"}
	}
	d, ok := imageDetails[detail]
	if !ok {
		return nil, &paramError{detailAt, "must be auto, low, high or original"}
	}
	img, err := imageOfURL(url)
	if err != nil {
		return nil, inParam(urlAt, err)
	}
	img.Detail = d
	return img, nil
}

// imageOfURL reads an image given by URL: a data: URL ("data:image/png;
// base64,...") is the image inline, its bytes and media type; any other URL
// is passed on as it is, for the engine's validation to check (https
// only).
func imageOfURL(u string) (*llmrelayv1.Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: u}}, nil
	}
	// The media type and "base64" are case-insensitive (RFC 2397, MIME):
	// the media type goes on in lower case, as the providers take it.
	meta, data, ok := strings.Cut(rest, ",")
	meta = strings.ToLower(meta)
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 {
		return nil, &paramError{"", "a data: URL must be data:<media type>;base64,<data>"}
	}
	return inlineImage(mediaType, data)
}

// inlineImage returns the inline image of media type mediaType whose
// bytes are base64 data (standard alphabet, padded or not).
func inlineImage(mediaType, data string) (*llmrelayv1.Image, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(data); err != nil {
			return nil, &paramError{"", "the image's data is not base64"}
		}
	}
	return &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: b}, MediaType: mediaType}, nil
}

// imageDetails are OpenAI's detail values.
var imageDetails = map[string]llmrelayv1.ImageDetail{
	"":         llmrelayv1.ImageDetail_IMAGE_DETAIL_UNSPECIFIED,
	"auto":     llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO,
	"low":      llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW,
	"high":     llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH,
	"original": llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL,
}
