// Command kreq sends arbitrary Kafka requests, at any version and including deliberately bad ones,
// to one broker over one persistent TCP connection, and prints the decoded answers.
//
// Requests are encoded and responses decoded by franz-go's kmsg package (written independently of
// both Apache Kafka and weir); framing and headers are done here, so nothing stops a caller from
// asking for versions, bodies or bytes a real client would never send.
//
// Usage:
//
//	kreq --broker host:port [--timeout 30s] [--client-id kreq] [--connect-timeout 10s]
//
// stdin holds JSON lines, one command each; stdout gets exactly one JSON line per command, in order.
//
// A request:
//
//	{"api": 3, "version": 12, "body": {"Topics": [{"Topic": "t"}]}}
//
// "body" holds fields of the kmsg request struct under their Go names (encoding/json spelling:
// byte slices are base64, nullable strings/arrays may be null). Omitted fields keep kmsg's defaults,
// also inside array elements (as kmsg.NewXxx would set them); unknown field names are an error.
// Optional keys:
//
//	"client_id": "x" | null     client id in the request header (default --client-id; null = null)
//	"body_hex": "..."           send these bytes as the body instead of encoding "body"
//	                            (needed for API keys kmsg does not know; the response is then hex only)
//	"flexible": true|false      force request header v2/response header v1 (or v1/v0)
//	"no_response": true         do not wait for a response (Produce with Acks=0 implies it)
//	"timeout": 5.5              seconds to wait for the response (default --timeout)
//	"hex": true                 also report the response body as "response_hex"
//
// Answers: {"ok": true, "response": {...}, "connection": N, "correlation_id": C, ...} or
// {"ok": false, "error": "connection closed" | "timeout" | "decode: ..." | "connect: ..." | ...}.
// The response is the kmsg response struct as encoding/json prints it, except that empty arrays
// and byte fields print as [] and "" (kmsg decodes them as nil) unless the field is nullable, so
// null means null on the wire. If re-encoding the decoded response does not give the received
// bytes (trailing bytes, non-canonical encoding), "reencoded_mismatch" and "response_hex" say so.
// After "connection closed" or "timeout" the connection is dropped; the next command opens a new
// one (and so does any command finding that the broker closed the connection in the meantime).
// "connection" numbers the TCP connections used, so callers can see a reconnect.
//
// Other commands:
//
//	{"raw_hex": "..."}           send size-prefixed bytes (request header + body, as given); answer
//	                             {"ok": true, "response_hex": "..."} (the response frame without its
//	                             size) or {"ok": false, "error": "connection closed"}
//	{"raw_unframed_hex": "..."}  the same, but the bytes are written as they are (no size prefix)
//	                             "no_response" and "timeout" apply to both
//	{"wait_closed": 2.0}         wait up to that many seconds for the broker to close the
//	                             connection: {"ok": true, "closed": true|false}
//	{"reconnect": true}          drop the connection and open a new one
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	keyControlledShutdown = 7
	keyApiVersions        = 18
	errUnsupportedVersion = 35
	maxFrame              = 1 << 30
)

var errClosed = errors.New("connection closed")

type command struct {
	API            *int16          `json:"api"`
	Version        *int16          `json:"version"`
	Body           json.RawMessage `json:"body"`
	BodyHex        *string         `json:"body_hex"`
	ClientID       json.RawMessage `json:"client_id"`
	Flexible       *bool           `json:"flexible"`
	NoResponse     bool            `json:"no_response"`
	Timeout        *float64        `json:"timeout"`
	Hex            bool            `json:"hex"`
	RawHex         *string         `json:"raw_hex"`
	RawUnframedHex *string         `json:"raw_unframed_hex"`
	WaitClosed     *float64        `json:"wait_closed"`
	Reconnect      bool            `json:"reconnect"`
}

type result map[string]any

func fail(msg string, args ...any) result {
	return result{"ok": false, "error": fmt.Sprintf(msg, args...)}
}

// ------------------------------------------------------------------------------ connection

type client struct {
	addr           string
	timeout        time.Duration
	connectTimeout time.Duration
	clientID       string

	conn    net.Conn
	rd      *bufio.Reader
	connNo  int
	nextCID int32
}

func (c *client) drop() {
	if c.conn != nil {
		c.conn.Close()
	}
	c.conn, c.rd = nil, nil
}

func (c *client) dial() error {
	c.drop()
	conn, err := net.DialTimeout("tcp", c.addr, c.connectTimeout)
	if err != nil {
		return err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c.conn, c.rd = conn, bufio.NewReaderSize(conn, 64*1024)
	c.connNo++
	c.nextCID = 1
	return nil
}

// ready makes sure there is a usable connection: a new one if there is none or the broker closed
// the old one since the last command. Bytes the broker sent unasked are returned (and dropped).
func (c *client) ready() ([]byte, error) {
	if c.conn == nil {
		return nil, c.dial()
	}
	var stray []byte
	for {
		c.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		_, err := c.rd.Peek(1)
		c.conn.SetReadDeadline(time.Time{})
		if err == nil {
			n := c.rd.Buffered()
			b, _ := c.rd.Peek(n)
			stray = append(stray, b...)
			c.rd.Discard(n)
			continue
		}
		if isTimeout(err) {
			return stray, nil
		}
		return stray, c.dial() // EOF or reset: the broker closed it
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// ioError turns a read/write error into a result and drops the connection, whose state is unknown.
func (c *client) ioError(err error, what string) result {
	c.drop()
	switch {
	case isTimeout(err):
		return result{"ok": false, "error": "timeout", "detail": what + ": " + err.Error()}
	case isClosed(err):
		return result{"ok": false, "error": "connection closed", "detail": what + ": " + err.Error()}
	}
	return result{"ok": false, "error": "io: " + what + ": " + err.Error()}
}

// roundtrip writes data (already framed) and, unless noResponse, reads one response frame.
func (c *client) roundtrip(data []byte, noResponse bool, timeout time.Duration) ([]byte, result) {
	c.conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.conn.Write(data); err != nil {
		return nil, c.ioError(err, "write")
	}
	if noResponse {
		return nil, nil
	}
	c.conn.SetReadDeadline(time.Now().Add(timeout))
	defer func() {
		if c.conn != nil {
			c.conn.SetReadDeadline(time.Time{})
		}
	}()
	var size [4]byte
	if _, err := io.ReadFull(c.rd, size[:]); err != nil {
		return nil, c.ioError(err, "read size")
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxFrame {
		c.drop()
		return nil, fail("response frame size %d", n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(c.rd, frame); err != nil {
		return nil, c.ioError(err, fmt.Sprintf("read %d-byte frame", n))
	}
	return frame, nil
}

// ------------------------------------------------------------------------------ requests

func (c *client) timeoutFor(cmd *command) time.Duration {
	if cmd.Timeout != nil {
		return time.Duration(*cmd.Timeout * float64(time.Second))
	}
	return c.timeout
}

func (c *client) handle(cmd *command) result {
	if cmd.Reconnect {
		if err := c.dial(); err != nil {
			return fail("connect: %v", err)
		}
		return result{"ok": true, "connection": c.connNo}
	}
	if cmd.WaitClosed != nil {
		return c.waitClosed(time.Duration(*cmd.WaitClosed * float64(time.Second)))
	}

	var out result
	var stray []byte
	var err error
	stray, err = c.ready()
	if err != nil {
		return fail("connect: %v", err)
	}
	defer func() {
		if len(stray) > 0 {
			out["unexpected_hex"] = hex.EncodeToString(stray)
		}
	}()

	switch {
	case cmd.RawHex != nil || cmd.RawUnframedHex != nil:
		out = c.raw(cmd)
	case cmd.API != nil:
		out = c.request(cmd)
	default:
		out = fail("bad command: need api, raw_hex, raw_unframed_hex, wait_closed or reconnect")
	}
	return out
}

func (c *client) raw(cmd *command) result {
	framed := cmd.RawHex != nil
	src := cmd.RawUnframedHex
	if framed {
		src = cmd.RawHex
	}
	payload, err := hex.DecodeString(*src)
	if err != nil {
		return fail("bad hex: %v", err)
	}
	data := payload
	if framed {
		data = binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(payload)), uint32(len(payload)))
		data = append(data, payload...)
	}
	conn := c.connNo
	frame, res := c.roundtrip(data, cmd.NoResponse, c.timeoutFor(cmd))
	if res != nil {
		res["connection"] = conn
		return res
	}
	out := result{"ok": true, "connection": conn}
	if !cmd.NoResponse {
		out["response_hex"] = hex.EncodeToString(frame)
	}
	return out
}

func (c *client) request(cmd *command) (out result) {
	if cmd.Version == nil {
		return fail("bad command: api without version")
	}
	key, version := *cmd.API, *cmd.Version
	req := kmsg.RequestForKey(key)
	if req == nil && cmd.BodyHex == nil {
		return fail("kmsg does not know api key %d: give body_hex", key)
	}

	var body []byte
	if cmd.BodyHex != nil {
		var err error
		if body, err = hex.DecodeString(*cmd.BodyHex); err != nil {
			return fail("bad body_hex: %v", err)
		}
		if req != nil {
			req.SetVersion(version)
		}
	} else {
		if len(cmd.Body) > 0 && string(cmd.Body) != "null" {
			if err := fill(reflect.ValueOf(req).Elem(), cmd.Body, "body"); err != nil {
				return fail("bad body: %v", err)
			}
		}
		req.SetVersion(version) // after the body, so a "Version" there cannot override it
		var perr any
		func() {
			defer func() { perr = recover() }()
			body = req.AppendTo(nil)
		}()
		if perr != nil {
			return fail("encode: %v", perr)
		}
	}

	flexible := req != nil && req.IsFlexible()
	if cmd.Flexible != nil {
		flexible = *cmd.Flexible
	}
	noResponse := cmd.NoResponse
	if p, ok := req.(*kmsg.ProduceRequest); ok && cmd.BodyHex == nil && p.Acks == 0 {
		noResponse = true
	}

	// Request header: v0 (ControlledShutdown v0 only), v1, or v2 (flexible: v1 + tagged fields).
	cid := c.nextCID
	c.nextCID++
	hdr := binary.BigEndian.AppendUint16(nil, uint16(key))
	hdr = binary.BigEndian.AppendUint16(hdr, uint16(version))
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(cid))
	if !(key == keyControlledShutdown && version == 0) {
		clientID, null, err := c.clientIDFor(cmd)
		if err != nil {
			return fail("bad client_id: %v", err)
		}
		if null {
			hdr = binary.BigEndian.AppendUint16(hdr, 0xffff)
		} else {
			hdr = binary.BigEndian.AppendUint16(hdr, uint16(len(clientID)))
			hdr = append(hdr, clientID...)
		}
		if flexible {
			hdr = append(hdr, 0) // no tagged fields
		}
	}
	payload := append(hdr, body...)
	data := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(payload)), uint32(len(payload)))
	data = append(data, payload...)

	conn := c.connNo
	start := time.Now()
	frame, res := c.roundtrip(data, noResponse, c.timeoutFor(cmd))
	if res != nil {
		res["connection"], res["correlation_id"] = conn, cid
		return res
	}
	out = result{"ok": true, "api": key, "version": version, "connection": conn,
		"correlation_id": cid, "elapsed_ms": time.Since(start).Milliseconds()}
	if noResponse {
		out["response"] = nil
		out["no_response"] = true
		return out
	}

	// Response header: v0 = correlation id; v1 adds tagged fields (never for ApiVersions).
	if len(frame) < 4 {
		c.drop()
		return result{"ok": false, "error": fmt.Sprintf("decode: %d-byte response frame", len(frame)),
			"response_hex": hex.EncodeToString(frame), "connection": conn, "correlation_id": cid}
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != cid {
		c.drop() // out of step with the broker: start afresh
		return result{"ok": false, "error": fmt.Sprintf("decode: correlation id %d, expected %d", got, cid),
			"response_hex": hex.EncodeToString(frame), "connection": conn, "correlation_id": cid}
	}
	rest := frame[4:]
	if flexible && key != keyApiVersions {
		var err error
		if rest, err = skipTags(rest); err != nil {
			return result{"ok": false, "error": "decode: response header: " + err.Error(),
				"response_hex": hex.EncodeToString(frame), "connection": conn, "correlation_id": cid}
		}
	}
	if cmd.Hex || req == nil {
		out["response_hex"] = hex.EncodeToString(rest)
	}
	if req == nil {
		out["response"] = nil
		return out
	}

	resp := req.ResponseKind()
	decodeVersion := version
	// A broker answers an ApiVersions version it does not support in the v0 layout (KIP-511).
	if key == keyApiVersions && version > 0 && len(rest) >= 2 &&
		int16(binary.BigEndian.Uint16(rest)) == errUnsupportedVersion {
		decodeVersion = 0
		out["decoded_version"] = 0
	}
	resp.SetVersion(decodeVersion)
	var derr error
	func() {
		defer func() {
			if p := recover(); p != nil {
				derr = fmt.Errorf("panic: %v", p)
			}
		}()
		derr = resp.ReadFrom(rest)
	}()
	if derr != nil {
		return result{"ok": false, "error": "decode: " + derr.Error(), "response_hex": hex.EncodeToString(rest),
			"connection": conn, "correlation_id": cid}
	}
	// kmsg ignores trailing bytes; re-encoding shows them (or a non-canonical encoding).
	again := resp.AppendTo(nil)
	if string(again) != string(rest) {
		out["reencoded_mismatch"] = map[string]int{"received": len(rest), "reencoded": len(again)}
		out["response_hex"] = hex.EncodeToString(rest)
	}
	e := emptier{resp: resp, baseline: again, cacheKey: fmt.Sprintf("%d/%d/", key, decodeVersion)}
	e.walk(reflect.ValueOf(resp), "")
	out["response"] = resp
	return out
}

// emptier makes kmsg's nil slices for empty non-nullable arrays and bytes into empty ones, so they
// print as [] and "" rather than null; nil stays where the field is nullable (there it is a null
// on the wire). A field is nullable if an empty value encodes differently from nil, which is
// tried on the response itself (set, re-encode, compare) once per field path.
type emptier struct {
	resp     kmsg.Response
	baseline []byte
	cacheKey string
}

var nullableCache = map[string]bool{}

var tagsType = reflect.TypeOf(kmsg.Tags{})

func (e *emptier) walk(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() && v.Elem().Kind() == reflect.Struct {
			e.walk(v.Elem(), path)
		}
	case reflect.Struct:
		if v.Type() == tagsType {
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				e.walk(v.Field(i), path+"."+t.Field(i).Name)
			}
		}
	case reflect.Slice:
		if !v.IsNil() {
			if k := v.Type().Elem().Kind(); k == reflect.Struct || k == reflect.Pointer {
				for i := 0; i < v.Len(); i++ {
					e.walk(v.Index(i), path+"[]")
				}
			}
			return
		}
		key := e.cacheKey + path
		nullable, known := nullableCache[key]
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		if !known {
			nullable = string(e.resp.AppendTo(nil)) != string(e.baseline)
			nullableCache[key] = nullable
		}
		if nullable {
			v.Set(reflect.Zero(v.Type()))
		}
	}
}

func (c *client) clientIDFor(cmd *command) (string, bool, error) {
	if len(cmd.ClientID) == 0 {
		return c.clientID, false, nil
	}
	if string(cmd.ClientID) == "null" {
		return "", true, nil
	}
	var s string
	err := json.Unmarshal(cmd.ClientID, &s)
	return s, false, err
}

func skipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("bad tagged field count")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		if _, k = binary.Uvarint(b); k <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < size {
			return nil, errors.New("bad tagged field size")
		}
		b = b[k+int(size):]
	}
	return b, nil
}

func (c *client) waitClosed(d time.Duration) result {
	if c.conn == nil {
		return result{"ok": true, "closed": true, "connection": c.connNo}
	}
	conn := c.connNo
	deadline := time.Now().Add(d)
	var got []byte
	out := result{"ok": true, "connection": conn}
	for {
		c.conn.SetReadDeadline(deadline)
		_, err := c.rd.Peek(1)
		if err == nil {
			n := c.rd.Buffered()
			b, _ := c.rd.Peek(n)
			got = append(got, b...)
			c.rd.Discard(n)
			continue
		}
		if isTimeout(err) {
			c.conn.SetReadDeadline(time.Time{})
			out["closed"] = false
		} else {
			c.drop()
			out["closed"] = true
		}
		break
	}
	if len(got) > 0 {
		out["received_hex"] = hex.EncodeToString(got)
	}
	return out
}

// ------------------------------------------------------------------------------ body decoding

type defaulter interface{ Default() }

// fill decodes JSON into v like encoding/json would, except that every struct (the request and
// the elements of its arrays) gets kmsg's Default() first and unknown field names are errors.
func fill(v reflect.Value, raw json.RawMessage, path string) error {
	trimmed := strings.TrimSpace(string(raw))
	switch v.Kind() {
	case reflect.Struct:
		if trimmed == "null" {
			return nil
		}
		if d, ok := v.Addr().Interface().(defaulter); ok {
			d.Default()
		}
		if v.NumField() > 0 && !v.Type().Field(0).IsExported() {
			// Types such as kmsg.Tags: leave them to encoding/json.
			return unmarshal(v, raw, path)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		t := v.Type()
		for name, val := range fields {
			f, ok := t.FieldByName(name)
			if !ok || !f.IsExported() {
				f, ok = t.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, name) })
			}
			if !ok || !f.IsExported() {
				return fmt.Errorf("%s: %s has no field %q", path, t.Name(), name)
			}
			if err := fill(v.FieldByIndex(f.Index), val, path+"."+f.Name); err != nil {
				return err
			}
		}
		return nil
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.Struct {
			return unmarshal(v, raw, path)
		}
		if trimmed == "null" {
			v.Set(reflect.Zero(v.Type()))
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := fill(p.Elem(), raw, path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Slice:
		ek := v.Type().Elem().Kind()
		if ek != reflect.Struct && ek != reflect.Pointer {
			return unmarshal(v, raw, path) // []byte (base64), []int32, []string, ...
		}
		if trimmed == "null" {
			v.Set(reflect.Zero(v.Type()))
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		s := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, item := range items {
			if err := fill(s.Index(i), item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	return unmarshal(v, raw, path)
}

func unmarshal(v reflect.Value, raw json.RawMessage, path string) error {
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// ------------------------------------------------------------------------------ main

func main() {
	broker := flag.String("broker", "", "host:port of the broker")
	timeout := flag.Duration("timeout", 30*time.Second, "default time to wait for each response")
	connectTimeout := flag.Duration("connect-timeout", 10*time.Second, "time to wait for a TCP connection")
	clientID := flag.String("client-id", "kreq", "default client id in request headers")
	flag.Parse()
	if *broker == "" {
		fmt.Fprintln(os.Stderr, "kreq: --broker host:port is required")
		os.Exit(2)
	}
	c := &client{addr: *broker, timeout: *timeout, connectTimeout: *connectTimeout, clientID: *clientID}
	defer c.drop()

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var cmd command
			var out result
			if jerr := json.Unmarshal(line, &cmd); jerr != nil {
				out = fail("bad command: %v", jerr)
			} else {
				out = c.handle(&cmd)
			}
			if eerr := enc.Encode(out); eerr != nil {
				// A response that encoding/json cannot express: say so instead of going silent.
				enc.Encode(fail("encode answer: %v", eerr))
			}
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "kreq: reading stdin:", err)
				os.Exit(1)
			}
			return
		}
	}
}
