package gateway

import (
	"encoding/json"
	"errors"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/grpc/status"
)

// WireError is the JSON body of every error the gateway answers, the same as connect-go's for
// RPCs: {"code":"not_found","message":"..."}.
type WireError struct {
	// Code is the error code in snake case, as connect.Code.String gives it.
	Code string `json:"code"`
	// Message says what went wrong, for people.
	Message string `json:"message,omitempty"`
}

// WriteError writes a JSON error with the HTTP status that fits code (StatusFor).
func WriteError(w http.ResponseWriter, code connect.Code, message string) {
	writeErrorStatus(w, StatusFor(code), code, message)
}

func writeErrorStatus(w http.ResponseWriter, status int, code connect.Code, message string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(WireError{Code: code.String(), Message: message})
}

// StatusFor is the HTTP status of an error code, as the Connect protocol maps them.
func StatusFor(code connect.Code) int {
	switch code {
	case connect.CodeCanceled:
		return 499
	case connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeOutOfRange:
		return http.StatusBadRequest
	case connect.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodeAlreadyExists, connect.CodeAborted:
		return http.StatusConflict
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeResourceExhausted:
		return http.StatusTooManyRequests
	case connect.CodeUnimplemented:
		return http.StatusNotImplemented
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	default:
		return http.StatusInternalServerError
	}
}

// writeErr writes err (a connect error, or anything else as internal) as a JSON error.
func writeErr(w http.ResponseWriter, err error) {
	WriteError(w, connect.CodeOf(err), errMessage(err))
}

func errMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}

// fromGRPC turns an error of a gRPC call to the referee or analytics into a connect error with
// the same code and message.
func fromGRPC(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	return connect.NewError(connect.Code(st.Code()), errors.New(st.Message()))
}
