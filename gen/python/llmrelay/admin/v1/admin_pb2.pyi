from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from llmrelay.v1 import llmrelay_pb2 as _llmrelay_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
KEY_SOURCE_CONFIG: KeySource
KEY_SOURCE_STORE: KeySource
KEY_SOURCE_UNSPECIFIED: KeySource
KEY_STATE_ACTIVE: KeyState
KEY_STATE_EXPIRED: KeyState
KEY_STATE_REVOKED: KeyState
KEY_STATE_UNSPECIFIED: KeyState

class Budget(_message.Message):
    __slots__ = ["max_cost_usd", "max_tokens", "resets_at", "spent_cost_usd", "spent_tokens", "window"]
    MAX_COST_USD_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    RESETS_AT_FIELD_NUMBER: _ClassVar[int]
    SPENT_COST_USD_FIELD_NUMBER: _ClassVar[int]
    SPENT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    max_cost_usd: float
    max_tokens: int
    resets_at: _timestamp_pb2.Timestamp
    spent_cost_usd: float
    spent_tokens: int
    window: str
    def __init__(self, window: _Optional[str] = ..., max_cost_usd: _Optional[float] = ..., max_tokens: _Optional[int] = ..., spent_cost_usd: _Optional[float] = ..., spent_tokens: _Optional[int] = ..., resets_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateKeyRequest(_message.Message):
    __slots__ = ["key"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: Key
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ...) -> None: ...

class CreateKeyResponse(_message.Message):
    __slots__ = ["key", "secret"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    key: Key
    secret: str
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class GetKeyRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetKeyResponse(_message.Message):
    __slots__ = ["key"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: Key
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ...) -> None: ...

class GetUsageRequest(_message.Message):
    __slots__ = ["end_day", "key", "start_day", "team"]
    END_DAY_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    START_DAY_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    end_day: str
    key: str
    start_day: str
    team: str
    def __init__(self, start_day: _Optional[str] = ..., end_day: _Optional[str] = ..., key: _Optional[str] = ..., team: _Optional[str] = ...) -> None: ...

class GetUsageResponse(_message.Message):
    __slots__ = ["records"]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[UsageRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[UsageRecord, _Mapping]]] = ...) -> None: ...

class Key(_message.Message):
    __slots__ = ["budgets", "created_at", "created_by", "expires_at", "limits", "metadata", "models", "name", "revoked_at", "scopes", "source", "state", "team", "tools", "updated_at"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BUDGETS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    budgets: _containers.RepeatedCompositeFieldContainer[Budget]
    created_at: _timestamp_pb2.Timestamp
    created_by: str
    expires_at: _timestamp_pb2.Timestamp
    limits: KeyLimits
    metadata: _containers.ScalarMap[str, str]
    models: _containers.RepeatedScalarFieldContainer[str]
    name: str
    revoked_at: _timestamp_pb2.Timestamp
    scopes: _containers.RepeatedScalarFieldContainer[str]
    source: KeySource
    state: KeyState
    team: str
    tools: _containers.RepeatedScalarFieldContainer[str]
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., source: _Optional[_Union[KeySource, str]] = ..., state: _Optional[_Union[KeyState, str]] = ..., scopes: _Optional[_Iterable[str]] = ..., models: _Optional[_Iterable[str]] = ..., tools: _Optional[_Iterable[str]] = ..., limits: _Optional[_Union[KeyLimits, _Mapping]] = ..., team: _Optional[str] = ..., budgets: _Optional[_Iterable[_Union[Budget, _Mapping]]] = ..., expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_by: _Optional[str] = ...) -> None: ...

class KeyLimits(_message.Message):
    __slots__ = ["burst", "max_concurrent_streams", "requests_per_second"]
    BURST_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_STREAMS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    burst: int
    max_concurrent_streams: int
    requests_per_second: float
    def __init__(self, requests_per_second: _Optional[float] = ..., burst: _Optional[int] = ..., max_concurrent_streams: _Optional[int] = ...) -> None: ...

class ListKeysRequest(_message.Message):
    __slots__ = ["page_size", "page_token", "show_revoked", "team"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SHOW_REVOKED_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    show_revoked: bool
    team: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., show_revoked: bool = ..., team: _Optional[str] = ...) -> None: ...

class ListKeysResponse(_message.Message):
    __slots__ = ["keys", "next_page_token"]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[Key]
    next_page_token: str
    def __init__(self, keys: _Optional[_Iterable[_Union[Key, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListTeamsRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ListTeamsResponse(_message.Message):
    __slots__ = ["teams"]
    TEAMS_FIELD_NUMBER: _ClassVar[int]
    teams: _containers.RepeatedCompositeFieldContainer[Team]
    def __init__(self, teams: _Optional[_Iterable[_Union[Team, _Mapping]]] = ...) -> None: ...

class RevokeKeyRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RevokeKeyResponse(_message.Message):
    __slots__ = ["key"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: Key
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ...) -> None: ...

class Team(_message.Message):
    __slots__ = ["budgets", "name"]
    BUDGETS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    budgets: _containers.RepeatedCompositeFieldContainer[Budget]
    name: str
    def __init__(self, name: _Optional[str] = ..., budgets: _Optional[_Iterable[_Union[Budget, _Mapping]]] = ...) -> None: ...

class UpdateKeyRequest(_message.Message):
    __slots__ = ["key", "update_mask"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    key: Key
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateKeyResponse(_message.Message):
    __slots__ = ["key"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: Key
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ...) -> None: ...

class UsageRecord(_message.Message):
    __slots__ = ["calls", "cost_usd", "day", "estimated_cost_usd", "estimated_input_tokens", "estimated_output_tokens", "key", "team", "usage"]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    calls: int
    cost_usd: float
    day: str
    estimated_cost_usd: float
    estimated_input_tokens: int
    estimated_output_tokens: int
    key: str
    team: str
    usage: _llmrelay_pb2.Usage
    def __init__(self, day: _Optional[str] = ..., key: _Optional[str] = ..., team: _Optional[str] = ..., calls: _Optional[int] = ..., usage: _Optional[_Union[_llmrelay_pb2.Usage, _Mapping]] = ..., cost_usd: _Optional[float] = ..., estimated_input_tokens: _Optional[int] = ..., estimated_output_tokens: _Optional[int] = ..., estimated_cost_usd: _Optional[float] = ...) -> None: ...

class KeySource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class KeyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
