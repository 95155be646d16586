// Names no other writer picks: 128 random bits as 32 lowercase hex digits,
// for staged objects that concurrent writers (other threads, other
// replicas) must never share.

#ifndef VERITYD_LIB_BASE_RANDOM_ID_H_
#define VERITYD_LIB_BASE_RANDOM_ID_H_

#include <string>

namespace verity {

std::string RandomId();

}  // namespace verity

#endif  // VERITYD_LIB_BASE_RANDOM_ID_H_
