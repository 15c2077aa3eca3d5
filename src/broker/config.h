// The broker's configuration is defined in src/config (broker_config.h: the typed definition,
// checked once at start-up; broker_keys.cpp: where keys are registered). These names keep the
// broker's code reading as before.
#pragma once

#include "config/broker_config.h"

namespace weir::broker {

using Config = config::BrokerConfig;
using Listener = config::Listener;
using config::parse_listeners;

}  // namespace weir::broker
