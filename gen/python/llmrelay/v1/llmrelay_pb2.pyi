from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.rpc import status_pb2 as _status_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
FINISH_REASON_CONTENT_FILTER: FinishReason
FINISH_REASON_LENGTH: FinishReason
FINISH_REASON_MAX_TOOL_TURNS: FinishReason
FINISH_REASON_OTHER: FinishReason
FINISH_REASON_PAUSED: FinishReason
FINISH_REASON_REFUSAL: FinishReason
FINISH_REASON_STOP: FinishReason
FINISH_REASON_TOOL_CALLS: FinishReason
FINISH_REASON_UNSPECIFIED: FinishReason
HEDGE_TARGET_NEXT: HedgeTarget
HEDGE_TARGET_SAME: HedgeTarget
HEDGE_TARGET_UNSPECIFIED: HedgeTarget
IMAGE_DETAIL_AUTO: ImageDetail
IMAGE_DETAIL_HIGH: ImageDetail
IMAGE_DETAIL_LOW: ImageDetail
IMAGE_DETAIL_ORIGINAL: ImageDetail
IMAGE_DETAIL_UNSPECIFIED: ImageDetail
MIDSTREAM_FAIL: Midstream
MIDSTREAM_RESTART: Midstream
MIDSTREAM_UNSPECIFIED: Midstream
MODEL_KIND_PROVIDER_MODEL: ModelKind
MODEL_KIND_ROUTE: ModelKind
MODEL_KIND_UNSPECIFIED: ModelKind
ON_INVALID_FAIL: OnInvalid
ON_INVALID_RETURN_TEXT: OnInvalid
ON_INVALID_UNSPECIFIED: OnInvalid
ON_OUTPUT_LIMIT_FAIL: OnOutputLimit
ON_OUTPUT_LIMIT_TRUNCATE: OnOutputLimit
ON_OUTPUT_LIMIT_UNSPECIFIED: OnOutputLimit
RETRY_REASON_INVALID_OUTPUT: RetryReason
RETRY_REASON_OVERLOADED: RetryReason
RETRY_REASON_RATE_LIMITED: RetryReason
RETRY_REASON_SERVER_ERROR: RetryReason
RETRY_REASON_STALLED: RetryReason
RETRY_REASON_TARGET_REFUSED: RetryReason
RETRY_REASON_TRANSPORT: RetryReason
RETRY_REASON_UNSPECIFIED: RetryReason
ROLE_ASSISTANT: Role
ROLE_SYSTEM: Role
ROLE_TOOL: Role
ROLE_UNSPECIFIED: Role
ROLE_USER: Role
ROUTE_BALANCE_ORDERED: RouteBalance
ROUTE_BALANCE_UNSPECIFIED: RouteBalance
ROUTE_BALANCE_WEIGHTED: RouteBalance
TOOL_CHOICE_MODE_AUTO: ToolChoiceMode
TOOL_CHOICE_MODE_NONE: ToolChoiceMode
TOOL_CHOICE_MODE_REQUIRED: ToolChoiceMode
TOOL_CHOICE_MODE_TOOL: ToolChoiceMode
TOOL_CHOICE_MODE_UNSPECIFIED: ToolChoiceMode

class AnyModelProvider(_message.Message):
    __slots__ = ["key_patterns", "provider", "provider_kind"]
    KEY_PATTERNS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_KIND_FIELD_NUMBER: _ClassVar[int]
    key_patterns: _containers.RepeatedScalarFieldContainer[str]
    provider: str
    provider_kind: str
    def __init__(self, provider: _Optional[str] = ..., provider_kind: _Optional[str] = ..., key_patterns: _Optional[_Iterable[str]] = ...) -> None: ...

class Delta(_message.Message):
    __slots__ = ["reasoning", "refusal", "text", "tool_call"]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    reasoning: ReasoningDelta
    refusal: str
    text: str
    tool_call: ToolCallDelta
    def __init__(self, text: _Optional[str] = ..., tool_call: _Optional[_Union[ToolCallDelta, _Mapping]] = ..., reasoning: _Optional[_Union[ReasoningDelta, _Mapping]] = ..., refusal: _Optional[str] = ...) -> None: ...

class EmbedRequest(_message.Message):
    __slots__ = ["dimensions", "inputs", "metadata", "model", "provider_options", "request_id"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    dimensions: int
    inputs: _containers.RepeatedScalarFieldContainer[str]
    metadata: _containers.ScalarMap[str, str]
    model: str
    provider_options: _struct_pb2.Struct
    request_id: str
    def __init__(self, model: _Optional[str] = ..., inputs: _Optional[_Iterable[str]] = ..., dimensions: _Optional[int] = ..., request_id: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class EmbedResponse(_message.Message):
    __slots__ = ["attempts", "embeddings", "model", "provider", "route", "usage"]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    attempts: int
    embeddings: _containers.RepeatedCompositeFieldContainer[Embedding]
    model: str
    provider: str
    route: str
    usage: Usage
    def __init__(self, embeddings: _Optional[_Iterable[_Union[Embedding, _Mapping]]] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., route: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., attempts: _Optional[int] = ...) -> None: ...

class Embedding(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class Final(_message.Message):
    __slots__ = ["annotations", "attempts", "finish_reason", "hedges", "message", "model", "object", "provider", "route", "stop_sequence", "transcript", "turns", "usage", "validation_errors", "validation_retries"]
    class AnnotationsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    HEDGES_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    STOP_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_ERRORS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_RETRIES_FIELD_NUMBER: _ClassVar[int]
    annotations: _containers.ScalarMap[str, str]
    attempts: int
    finish_reason: FinishReason
    hedges: int
    message: Message
    model: str
    object: _struct_pb2.Value
    provider: str
    route: str
    stop_sequence: str
    transcript: _containers.RepeatedCompositeFieldContainer[Message]
    turns: int
    usage: Usage
    validation_errors: _containers.RepeatedCompositeFieldContainer[ValidationError]
    validation_retries: int
    def __init__(self, message: _Optional[_Union[Message, _Mapping]] = ..., object: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., attempts: _Optional[int] = ..., validation_retries: _Optional[int] = ..., validation_errors: _Optional[_Iterable[_Union[ValidationError, _Mapping]]] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., hedges: _Optional[int] = ..., route: _Optional[str] = ..., annotations: _Optional[_Mapping[str, str]] = ..., transcript: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., turns: _Optional[int] = ..., stop_sequence: _Optional[str] = ...) -> None: ...

class GenerateEvent(_message.Message):
    __slots__ = ["attempt", "delta", "final", "heartbeat", "partial_object", "sequence", "tool_progress", "tool_result", "turn", "will_retry"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_OBJECT_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TOOL_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    WILL_RETRY_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    delta: Delta
    final: Final
    heartbeat: Heartbeat
    partial_object: _struct_pb2.Value
    sequence: int
    tool_progress: ToolProgress
    tool_result: ToolResult
    turn: int
    will_retry: WillRetry
    def __init__(self, sequence: _Optional[int] = ..., attempt: _Optional[int] = ..., delta: _Optional[_Union[Delta, _Mapping]] = ..., will_retry: _Optional[_Union[WillRetry, _Mapping]] = ..., final: _Optional[_Union[Final, _Mapping]] = ..., partial_object: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., tool_progress: _Optional[_Union[ToolProgress, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., turn: _Optional[int] = ...) -> None: ...

class GenerateRequest(_message.Message):
    __slots__ = ["fallback_models", "first_event_timeout", "generation", "heartbeat_interval", "hedging", "max_tool_turns", "messages", "metadata", "model", "output_limit", "provider_options", "request_id", "response_format", "resumable", "retry", "server_tools", "stream_idle_timeout", "tool_choice", "tools"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FALLBACK_MODELS_FIELD_NUMBER: _ClassVar[int]
    FIRST_EVENT_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    HEDGING_FIELD_NUMBER: _ClassVar[int]
    MAX_TOOL_TURNS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_LIMIT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    RESUMABLE_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    SERVER_TOOLS_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDLE_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    fallback_models: _containers.RepeatedScalarFieldContainer[str]
    first_event_timeout: _duration_pb2.Duration
    generation: GenerationConfig
    heartbeat_interval: _duration_pb2.Duration
    hedging: HedgePolicy
    max_tool_turns: int
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    metadata: _containers.ScalarMap[str, str]
    model: str
    output_limit: OutputLimit
    provider_options: _struct_pb2.Struct
    request_id: str
    response_format: ResponseFormat
    resumable: bool
    retry: RetryPolicy
    server_tools: _containers.RepeatedScalarFieldContainer[str]
    stream_idle_timeout: _duration_pb2.Duration
    tool_choice: ToolChoice
    tools: _containers.RepeatedCompositeFieldContainer[Tool]
    def __init__(self, model: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., generation: _Optional[_Union[GenerationConfig, _Mapping]] = ..., tools: _Optional[_Iterable[_Union[Tool, _Mapping]]] = ..., tool_choice: _Optional[_Union[ToolChoice, _Mapping]] = ..., response_format: _Optional[_Union[ResponseFormat, _Mapping]] = ..., retry: _Optional[_Union[RetryPolicy, _Mapping]] = ..., stream_idle_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., request_id: _Optional[str] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., fallback_models: _Optional[_Iterable[str]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., first_event_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., output_limit: _Optional[_Union[OutputLimit, _Mapping]] = ..., heartbeat_interval: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., resumable: bool = ..., hedging: _Optional[_Union[HedgePolicy, _Mapping]] = ..., server_tools: _Optional[_Iterable[str]] = ..., max_tool_turns: _Optional[int] = ...) -> None: ...

class GenerationConfig(_message.Message):
    __slots__ = ["max_output_tokens", "stop", "temperature", "top_p"]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    max_output_tokens: int
    stop: _containers.RepeatedScalarFieldContainer[str]
    temperature: float
    top_p: float
    def __init__(self, max_output_tokens: _Optional[int] = ..., temperature: _Optional[float] = ..., top_p: _Optional[float] = ..., stop: _Optional[_Iterable[str]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class HedgePolicy(_message.Message):
    __slots__ = ["adaptive", "hedge_after", "max_hedges", "target"]
    ADAPTIVE_FIELD_NUMBER: _ClassVar[int]
    HEDGE_AFTER_FIELD_NUMBER: _ClassVar[int]
    MAX_HEDGES_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    adaptive: bool
    hedge_after: _duration_pb2.Duration
    max_hedges: int
    target: HedgeTarget
    def __init__(self, hedge_after: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., adaptive: bool = ..., max_hedges: _Optional[int] = ..., target: _Optional[_Union[HedgeTarget, str]] = ...) -> None: ...

class Image(_message.Message):
    __slots__ = ["data", "detail", "media_type", "url"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    detail: ImageDetail
    media_type: str
    url: str
    def __init__(self, url: _Optional[str] = ..., data: _Optional[bytes] = ..., media_type: _Optional[str] = ..., detail: _Optional[_Union[ImageDetail, str]] = ...) -> None: ...

class ListModelsRequest(_message.Message):
    __slots__ = ["provider"]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    provider: str
    def __init__(self, provider: _Optional[str] = ...) -> None: ...

class ListModelsResponse(_message.Message):
    __slots__ = ["any_model_providers", "models"]
    ANY_MODEL_PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    any_model_providers: _containers.RepeatedCompositeFieldContainer[AnyModelProvider]
    models: _containers.RepeatedCompositeFieldContainer[Model]
    def __init__(self, models: _Optional[_Iterable[_Union[Model, _Mapping]]] = ..., any_model_providers: _Optional[_Iterable[_Union[AnyModelProvider, _Mapping]]] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ["server"]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    server: str
    def __init__(self, server: _Optional[str] = ...) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ["servers", "tools"]
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    servers: _containers.RepeatedCompositeFieldContainer[ToolServer]
    tools: _containers.RepeatedCompositeFieldContainer[ServerTool]
    def __init__(self, tools: _Optional[_Iterable[_Union[ServerTool, _Mapping]]] = ..., servers: _Optional[_Iterable[_Union[ToolServer, _Mapping]]] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ["content", "parts", "provider_tools", "reasoning", "refusal", "role", "server_tool", "tool_call_id", "tool_calls", "tool_error"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_TOOLS_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SERVER_TOOL_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_ERROR_FIELD_NUMBER: _ClassVar[int]
    content: str
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    provider_tools: _containers.RepeatedCompositeFieldContainer[ProviderToolBlock]
    reasoning: _containers.RepeatedCompositeFieldContainer[Reasoning]
    refusal: str
    role: Role
    server_tool: str
    tool_call_id: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_error: bool
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., content: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., reasoning: _Optional[_Iterable[_Union[Reasoning, _Mapping]]] = ..., refusal: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., provider_tools: _Optional[_Iterable[_Union[ProviderToolBlock, _Mapping]]] = ..., server_tool: _Optional[str] = ..., tool_error: bool = ...) -> None: ...

class Model(_message.Message):
    __slots__ = ["balance", "health", "id", "kind", "name", "provider", "provider_kind", "targets"]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_KIND_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    balance: RouteBalance
    health: TargetHealth
    id: str
    kind: ModelKind
    name: str
    provider: str
    provider_kind: str
    targets: _containers.RepeatedCompositeFieldContainer[RouteTarget]
    def __init__(self, id: _Optional[str] = ..., provider: _Optional[str] = ..., provider_kind: _Optional[str] = ..., name: _Optional[str] = ..., kind: _Optional[_Union[ModelKind, str]] = ..., targets: _Optional[_Iterable[_Union[RouteTarget, _Mapping]]] = ..., balance: _Optional[_Union[RouteBalance, str]] = ..., health: _Optional[_Union[TargetHealth, _Mapping]] = ...) -> None: ...

class OutputLimit(_message.Message):
    __slots__ = ["max_bytes", "on_limit"]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    ON_LIMIT_FIELD_NUMBER: _ClassVar[int]
    max_bytes: int
    on_limit: OnOutputLimit
    def __init__(self, max_bytes: _Optional[int] = ..., on_limit: _Optional[_Union[OnOutputLimit, str]] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ["image", "provider_tool", "reasoning", "text", "tool_call"]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_TOOL_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    image: Image
    provider_tool: int
    reasoning: int
    text: str
    tool_call: int
    def __init__(self, text: _Optional[str] = ..., reasoning: _Optional[int] = ..., tool_call: _Optional[int] = ..., provider_tool: _Optional[int] = ..., image: _Optional[_Union[Image, _Mapping]] = ...) -> None: ...

class ProviderToolBlock(_message.Message):
    __slots__ = ["extra", "format", "id", "input", "kind", "name", "result"]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    extra: str
    format: str
    id: str
    input: str
    kind: str
    name: str
    result: str
    def __init__(self, kind: _Optional[str] = ..., id: _Optional[str] = ..., name: _Optional[str] = ..., input: _Optional[str] = ..., result: _Optional[str] = ..., extra: _Optional[str] = ..., format: _Optional[str] = ...) -> None: ...

class Reasoning(_message.Message):
    __slots__ = ["format", "id", "kind", "provider_format", "redacted", "signature", "text"]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FORMAT_FIELD_NUMBER: _ClassVar[int]
    REDACTED_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    format: str
    id: str
    kind: str
    provider_format: str
    redacted: str
    signature: str
    text: str
    def __init__(self, text: _Optional[str] = ..., signature: _Optional[str] = ..., redacted: _Optional[str] = ..., format: _Optional[str] = ..., id: _Optional[str] = ..., kind: _Optional[str] = ..., provider_format: _Optional[str] = ...) -> None: ...

class ReasoningDelta(_message.Message):
    __slots__ = ["format", "index", "redacted", "signature", "text"]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    REDACTED_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    format: str
    index: int
    redacted: str
    signature: str
    text: str
    def __init__(self, index: _Optional[int] = ..., text: _Optional[str] = ..., signature: _Optional[str] = ..., redacted: _Optional[str] = ..., format: _Optional[str] = ...) -> None: ...

class ResponseFormat(_message.Message):
    __slots__ = ["json_schema", "max_validation_retries", "name", "on_invalid", "partial_object_interval", "stream_partial_objects"]
    JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    MAX_VALIDATION_RETRIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ON_INVALID_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_OBJECT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    STREAM_PARTIAL_OBJECTS_FIELD_NUMBER: _ClassVar[int]
    json_schema: _struct_pb2.Struct
    max_validation_retries: int
    name: str
    on_invalid: OnInvalid
    partial_object_interval: _duration_pb2.Duration
    stream_partial_objects: bool
    def __init__(self, json_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., name: _Optional[str] = ..., max_validation_retries: _Optional[int] = ..., on_invalid: _Optional[_Union[OnInvalid, str]] = ..., stream_partial_objects: bool = ..., partial_object_interval: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ResumeRequest(_message.Message):
    __slots__ = ["after_sequence", "request_id"]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    after_sequence: int
    request_id: str
    def __init__(self, request_id: _Optional[str] = ..., after_sequence: _Optional[int] = ...) -> None: ...

class RetryPolicy(_message.Message):
    __slots__ = ["initial_backoff", "max_attempts", "max_backoff", "midstream"]
    INITIAL_BACKOFF_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    MAX_BACKOFF_FIELD_NUMBER: _ClassVar[int]
    MIDSTREAM_FIELD_NUMBER: _ClassVar[int]
    initial_backoff: _duration_pb2.Duration
    max_attempts: int
    max_backoff: _duration_pb2.Duration
    midstream: Midstream
    def __init__(self, max_attempts: _Optional[int] = ..., initial_backoff: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., max_backoff: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., midstream: _Optional[_Union[Midstream, str]] = ...) -> None: ...

class RouteTarget(_message.Message):
    __slots__ = ["health", "model", "name", "provider", "weight"]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    health: TargetHealth
    model: str
    name: str
    provider: str
    weight: int
    def __init__(self, model: _Optional[str] = ..., provider: _Optional[str] = ..., name: _Optional[str] = ..., weight: _Optional[int] = ..., health: _Optional[_Union[TargetHealth, _Mapping]] = ...) -> None: ...

class ServerTool(_message.Message):
    __slots__ = ["available", "description", "idempotent", "input_schema", "model_name", "name", "server", "title"]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    available: bool
    description: str
    idempotent: bool
    input_schema: _struct_pb2.Struct
    model_name: str
    name: str
    server: str
    title: str
    def __init__(self, name: _Optional[str] = ..., server: _Optional[str] = ..., model_name: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., available: bool = ..., idempotent: bool = ...) -> None: ...

class TargetHealth(_message.Message):
    __slots__ = ["consecutive_failures", "ejected", "ejected_until", "ejections"]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    EJECTED_FIELD_NUMBER: _ClassVar[int]
    EJECTED_UNTIL_FIELD_NUMBER: _ClassVar[int]
    EJECTIONS_FIELD_NUMBER: _ClassVar[int]
    consecutive_failures: int
    ejected: bool
    ejected_until: _timestamp_pb2.Timestamp
    ejections: int
    def __init__(self, ejected: bool = ..., ejected_until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., consecutive_failures: _Optional[int] = ..., ejections: _Optional[int] = ...) -> None: ...

class Tool(_message.Message):
    __slots__ = ["description", "name", "parameters"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    parameters: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ["arguments", "id", "name", "signature"]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    arguments: str
    id: str
    name: str
    signature: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ..., signature: _Optional[str] = ...) -> None: ...

class ToolCallDelta(_message.Message):
    __slots__ = ["arguments_delta", "id", "index", "name", "signature"]
    ARGUMENTS_DELTA_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    arguments_delta: str
    id: str
    index: int
    name: str
    signature: str
    def __init__(self, index: _Optional[int] = ..., id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_delta: _Optional[str] = ..., signature: _Optional[str] = ...) -> None: ...

class ToolChoice(_message.Message):
    __slots__ = ["disable_parallel_tool_calls", "mode", "name"]
    DISABLE_PARALLEL_TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    disable_parallel_tool_calls: bool
    mode: ToolChoiceMode
    name: str
    def __init__(self, mode: _Optional[_Union[ToolChoiceMode, str]] = ..., name: _Optional[str] = ..., disable_parallel_tool_calls: bool = ...) -> None: ...

class ToolProgress(_message.Message):
    __slots__ = ["message", "name", "progress", "tool_call_id", "total"]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    message: str
    name: str
    progress: float
    tool_call_id: str
    total: float
    def __init__(self, tool_call_id: _Optional[str] = ..., progress: _Optional[float] = ..., total: _Optional[float] = ..., message: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ["attempts", "content", "images", "is_error", "name", "tool_call_id", "truncated", "user_content"]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    USER_CONTENT_FIELD_NUMBER: _ClassVar[int]
    attempts: int
    content: str
    images: _containers.RepeatedCompositeFieldContainer[ToolResultImage]
    is_error: bool
    name: str
    tool_call_id: str
    truncated: bool
    user_content: str
    def __init__(self, tool_call_id: _Optional[str] = ..., name: _Optional[str] = ..., content: _Optional[str] = ..., is_error: bool = ..., truncated: bool = ..., attempts: _Optional[int] = ..., images: _Optional[_Iterable[_Union[ToolResultImage, _Mapping]]] = ..., user_content: _Optional[str] = ...) -> None: ...

class ToolResultImage(_message.Message):
    __slots__ = ["media_type", "offset", "size"]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    media_type: str
    offset: int
    size: int
    def __init__(self, offset: _Optional[int] = ..., media_type: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class ToolServer(_message.Message):
    __slots__ = ["available", "listed_at", "name", "tools"]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    LISTED_AT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    available: bool
    listed_at: _timestamp_pb2.Timestamp
    name: str
    tools: int
    def __init__(self, name: _Optional[str] = ..., available: bool = ..., listed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., tools: _Optional[int] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ["cache_creation_input_tokens", "cached_input_tokens", "input_tokens", "output_tokens", "reasoning_tokens"]
    CACHED_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_CREATION_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    cache_creation_input_tokens: int
    cached_input_tokens: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., reasoning_tokens: _Optional[int] = ..., cached_input_tokens: _Optional[int] = ..., cache_creation_input_tokens: _Optional[int] = ...) -> None: ...

class ValidationError(_message.Message):
    __slots__ = ["attempt", "instance_location", "keyword_location", "message"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_LOCATION_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_LOCATION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    instance_location: str
    keyword_location: str
    message: str
    def __init__(self, attempt: _Optional[int] = ..., instance_location: _Optional[str] = ..., keyword_location: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class WillRetry(_message.Message):
    __slots__ = ["cause", "delay", "discard_partial", "fallback", "next_attempt", "next_model", "next_provider", "reason"]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PARTIAL_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NEXT_MODEL_FIELD_NUMBER: _ClassVar[int]
    NEXT_PROVIDER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    cause: _status_pb2.Status
    delay: _duration_pb2.Duration
    discard_partial: bool
    fallback: bool
    next_attempt: int
    next_model: str
    next_provider: str
    reason: RetryReason
    def __init__(self, reason: _Optional[_Union[RetryReason, str]] = ..., delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., next_attempt: _Optional[int] = ..., discard_partial: bool = ..., cause: _Optional[_Union[_status_pb2.Status, _Mapping]] = ..., next_provider: _Optional[str] = ..., next_model: _Optional[str] = ..., fallback: bool = ...) -> None: ...

class OnOutputLimit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ImageDetail(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ToolChoiceMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class OnInvalid(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Midstream(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class HedgeTarget(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RetryReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class FinishReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ModelKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RouteBalance(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
