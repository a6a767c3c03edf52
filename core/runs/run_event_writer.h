#pragma once
// The one serializer of the event protocol (docs/events.md): a typed RunEvent (core/runs/run_event.h)
// as the JSON object of its line, without "v" and "time" (EventLog adds them when it writes). Its
// inverse is parseRunEvent(): parseRunEvent(runEventType(e), runEventJson(e)) gives e back. Each
// struct says which fields are left out when empty and which are written as null.
#include "core/runs/run_event.h"

#include <nlohmann/json.hpp>

namespace streetgan::events {

/// The event's "type" ("step", "run_started", …); "" for std::monostate.
const char* runEventType(const RunEvent& event);

/// The event's fields and its "type", as one object (empty for std::monostate).
nlohmann::json runEventJson(const RunEvent& event);

}  // namespace streetgan::events
