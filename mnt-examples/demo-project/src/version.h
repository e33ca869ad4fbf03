#pragma once
#define TALLY_VERSION "1.0.0"
