// How the read-time defenses' results read on a terminal (`bulwark search`, `answer`, `gate
// score`, `gate fit`; read_defense_commands.h): the gate's verdict, the smoothing certificate and
// a smoothed answer with the entries behind each run.
#pragma once

#include <ostream>
#include <string>

#include "gate/query_gate.h"
#include "smoothing/certificate.h"
#include "smoothing/smoother.h"

namespace bulwark::cli {

// `x` with `digits` decimals; "-" for NaN.
std::string Fixed(double x, int digits = 4);

// "pass (mahalanobis 1.2345 <= 2.0000)"; a strip adds the removed tokens and the score after.
std::string DescribeGate(const GateVerdict& v);

// "certificate m=M k=K nruns=N: delta(t=1)=... delta(t=2)=..."
std::string DescribeCertificate(const Certificate& c);

// The answer (or the abstention and its reason), the majority, the certificate, every run's
// entry ids and response, and the seed.
void PrintSmoothed(std::ostream& out, const SmoothedAnswer& a);

}  // namespace bulwark::cli
