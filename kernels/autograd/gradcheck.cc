#include "kernels/autograd/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

#include "dispatcher/core/error.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/copy.h"
#include "kernels/factory.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace autograd {
namespace {

using Values = std::vector<double>;

// The elements of `t` in row-major order, as double (a copy, no history).
Values valuesOf(const Tensor& t) {
  NoGradGuard no_grad;
  Tensor d = turnout::contiguous(turnout::to(turnout::detach(t), kDouble));
  if (d.is_cuda()) d = turnout::to(d, Device(DeviceType::CPU));
  const double* p = d.numel() ? d.data_ptr<double>() : nullptr;
  return Values(p, p + d.numel());
}

// The storage offset, in elements, of row-major element `flat` of `t`.
int64_t offsetOf(const Tensor& t, int64_t flat) {
  int64_t offset = t.storage_offset();
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t size = t.size(d);
    offset += (flat % size) * t.stride(d);
    flat /= size;
  }
  return offset;
}

// Element `flat` of `t` as a 0-dim view: how a CUDA tensor's elements are
// read and written (a copy each, with a synchronisation).
Tensor elementOf(const Tensor& t, int64_t flat) {
  return makeView(t, {}, {}, offsetOf(t, flat));
}

double getElement(const Tensor& t, int64_t flat) {
  if (!t.is_cpu()) return valuesOf(elementOf(t, flat))[0];
  const int64_t off = offsetOf(t, flat) - t.storage_offset();
  if (t.scalar_type() == kDouble) return t.data_ptr<double>()[off];
  return t.data_ptr<float>()[off];
}

void setElement(const Tensor& t, int64_t flat, double v) {
  if (!t.is_cpu()) {
    NoGradGuard no_grad;
    elementOf(t, flat).copy_(turnout::full({}, v, TensorOptions(t.scalar_type())));
    return;
  }
  const int64_t off = offsetOf(t, flat) - t.storage_offset();
  if (t.scalar_type() == kDouble) {
    t.data_ptr<double>()[off] = v;
  } else {
    t.data_ptr<float>()[off] = static_cast<float>(v);
  }
}

bool differentiable(const Tensor& t) {
  return t.defined() && isFloatingType(t.scalar_type());
}

// fn's outputs as values, run without grad; checks that the outputs keep
// their number and sizes from one call to the next.
std::vector<Values> evaluate(const GradcheckFunction& fn,
                             const std::vector<Tensor>& leaves,
                             const std::vector<Tensor>& reference) {
  std::vector<Tensor> outs;
  {
    NoGradGuard no_grad;
    outs = fn(leaves);
  }
  TURNOUT_CHECK(outs.size() == reference.size(), ErrorKind::InvalidArgument,
                "gradcheck: the function returned ", reference.size(),
                " output(s) on its first call and ", outs.size(),
                " on a later one; it must return the same outputs each call");
  std::vector<Values> values(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!differentiable(reference[k])) continue;
    TURNOUT_CHECK(outs[k].defined() && outs[k].sizes() == reference[k].sizes(),
                  ErrorKind::InvalidArgument, "gradcheck: output ", k,
                  " changed its sizes from one call to the next; the "
                  "function must be deterministic");
    values[k] = valuesOf(outs[k]);
  }
  return values;
}

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// A Jacobian (rows: input elements, columns: output elements) as text, at
// most 8 rows and 8 columns.
std::string formatJacobian(const std::vector<Values>& rows) {
  constexpr size_t kMax = 8;
  std::string out = "[";
  for (size_t r = 0; r < rows.size() && r < kMax; ++r) {
    out += r ? ",\n  [" : "[";
    for (size_t c = 0; c < rows[r].size() && c < kMax; ++c) {
      if (c) out += ", ";
      out += formatNumber(rows[r][c]);
    }
    if (rows[r].size() > kMax) out += ", ...";
    out += "]";
  }
  if (rows.size() > kMax) out += ",\n  ...";
  return out + "]";
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFunction& fn,
                          const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  TURNOUT_CHECK(options.eps > 0, ErrorKind::InvalidArgument,
                "gradcheck: eps must be positive, got ", options.eps);
  // Leaf copies of the inputs that require grad; the others pass as given.
  std::vector<Tensor> leaves = inputs;
  std::vector<size_t> diff;  // positions of the inputs that require grad
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !requiresGrad(t)) continue;
    TURNOUT_CHECK(
        (t.is_cpu() || t.is_cuda()) &&
            (t.scalar_type() == kDouble || t.scalar_type() == kFloat),
        ErrorKind::InvalidArgument, "gradcheck: input ", i,
        " requires grad but is a ", toString(t.scalar_type()), " tensor on ",
        t.device().str(),
        "; gradcheck perturbs Double (or Float) CPU or CUDA tensors: convert "
        "it with .to(turnout::kDouble)");
    {
      NoGradGuard no_grad;
      leaves[i] = turnout::clone(turnout::detach(t));
    }
    setRequiresGrad(leaves[i], true);
    diff.push_back(i);
  }
  TURNOUT_CHECK(!diff.empty(), ErrorKind::InvalidArgument,
                "gradcheck: expected at least one input tensor that requires "
                "grad, but none does; call requires_grad_() on the inputs to "
                "differentiate");

  std::vector<Tensor> reference;
  {
    NoGradGuard no_grad;
    reference = fn(leaves);
  }
  const size_t num_outputs = reference.size();

  // numerical[i][k][j][m]: d output k element m / d input i element j.
  std::vector<std::vector<std::vector<Values>>> numerical(diff.size());
  for (size_t a = 0; a < diff.size(); ++a) {
    const Tensor& x = leaves[diff[a]];
    const int64_t n = x.numel();
    numerical[a].assign(num_outputs, std::vector<Values>(
                                         static_cast<size_t>(n)));
    for (int64_t j = 0; j < n; ++j) {
      const double orig = getElement(x, j);
      setElement(x, j, orig - options.eps);
      const std::vector<Values> minus = evaluate(fn, leaves, reference);
      setElement(x, j, orig + options.eps);
      const std::vector<Values> plus = evaluate(fn, leaves, reference);
      setElement(x, j, orig);
      for (size_t k = 0; k < num_outputs; ++k) {
        Values& col = numerical[a][k][static_cast<size_t>(j)];
        col.resize(plus[k].size());
        for (size_t m = 0; m < col.size(); ++m) {
          col[m] = (plus[k][m] - minus[k][m]) / (2 * options.eps);
        }
      }
    }
  }

  GradcheckResult result;
  for (size_t k = 0; k < num_outputs && result.ok; ++k) {
    if (!differentiable(reference[k])) continue;
    const int64_t out_numel = reference[k].numel();
    // analytical[a][j][m], filled column by column (one backward per m).
    std::vector<std::vector<Values>> analytical(diff.size());
    for (size_t a = 0; a < diff.size(); ++a) {
      analytical[a].assign(static_cast<size_t>(leaves[diff[a]].numel()),
                           Values(static_cast<size_t>(out_numel), 0.0));
    }
    for (int64_t m = 0; m < out_numel; ++m) {
      for (size_t i : diff) setGrad(leaves[i], Tensor());
      std::vector<Tensor> outs = fn(leaves);
      TURNOUT_CHECK(outs.size() == num_outputs, ErrorKind::InvalidArgument,
                    "gradcheck: the function returned ", num_outputs,
                    " output(s) on its first call and ", outs.size(),
                    " on a later one");
      const Tensor& out = outs[k];
      if (!requiresGrad(out)) continue;  // no gradient flows: zeros
      Tensor seed;
      {
        NoGradGuard no_grad;
        // Built in double and cast: setElement writes Float and Double
        // only, and an output may be Half or BFloat16 (a cast).
        seed = turnout::zeros(out.sizes(),
                              TensorOptions(kDouble).device(out.device()));
        setElement(seed, m, 1.0);
        seed = turnout::to(seed, out.scalar_type());
      }
      backward({out}, {seed});
      for (size_t a = 0; a < diff.size(); ++a) {
        const Tensor& x = leaves[diff[a]];
        Tensor g = grad(x);
        if (!g.defined()) continue;
        TURNOUT_CHECK(g.sizes() == x.sizes(), ErrorKind::InvalidArgument,
                      "gradcheck: the gradient of input ", diff[a],
                      " has sizes ", g.toString(), " that differ from the "
                      "input's; the backward formula returns a wrong shape");
        const Values gv = valuesOf(g);
        for (size_t j = 0; j < gv.size(); ++j) {
          analytical[a][j][static_cast<size_t>(m)] = gv[j];
        }
      }
    }
    for (size_t a = 0; a < diff.size() && result.ok; ++a) {
      const std::vector<Values>& num = numerical[a][k];
      const std::vector<Values>& ana = analytical[a];
      double worst = 0;
      size_t wj = 0, wm = 0;
      bool bad = false;
      for (size_t j = 0; j < num.size(); ++j) {
        for (size_t m = 0; m < num[j].size(); ++m) {
          const double diff_abs = std::fabs(ana[j][m] - num[j][m]);
          const bool close =
              diff_abs <= options.atol + options.rtol * std::fabs(num[j][m]) ||
              (std::isnan(ana[j][m]) && std::isnan(num[j][m]));
          if (!close && (!bad || diff_abs > worst || std::isnan(diff_abs))) {
            bad = true;
            worst = diff_abs;
            wj = j;
            wm = m;
          }
        }
      }
      if (!bad) continue;
      result.ok = false;
      std::ostringstream msg;
      msg << "Jacobian mismatch for output " << k << " with respect to input "
          << diff[a] << ": the largest difference is " << formatNumber(worst)
          << " (analytical " << formatNumber(ana[wj][wm]) << ", numerical "
          << formatNumber(num[wj][wm]) << ") at input element " << wj
          << ", output element " << wm << " (atol=" << options.atol
          << ", rtol=" << options.rtol << ", eps=" << options.eps
          << ").\nnumerical (rows: input elements, columns: output "
             "elements):\n"
          << formatJacobian(num) << "\nanalytical:\n"
          << formatJacobian(ana);
      result.message = msg.str();
    }
  }
  TURNOUT_CHECK(result.ok || !options.raise_exception,
                ErrorKind::InvalidArgument, "gradcheck: ", result.message);
  return result;
}

}  // namespace autograd
}  // namespace turnout
