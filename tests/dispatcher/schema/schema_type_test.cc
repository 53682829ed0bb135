#include "dispatcher/schema/schema_type.h"

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

using Kind = SchemaType::Kind;

SchemaTypePtr leaf(Kind kind) { return SchemaType::get(kind); }
SchemaTypePtr listOf(SchemaTypePtr t) { return SchemaType::list(t); }
SchemaTypePtr optionalOf(SchemaTypePtr t) { return SchemaType::optional(t); }

// First in the file so that it is the first use of the shared singletons:
// their construction must be safe from many threads at once.
TEST(SchemaType, FirstUseFromManyThreads) {
  std::vector<std::thread> threads;
  std::vector<const SchemaType*> seen(8);
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] {
      SchemaTypePtr t = listOf(optionalOf(leaf(Kind::Tensor)));
      seen[i] = t.get();
      EXPECT_EQ(t->toString(), "Tensor?[]");
    });
  }
  for (std::thread& t : threads) t.join();
  for (const SchemaType* s : seen) EXPECT_EQ(s, seen[0]);
}

TEST(SchemaType, PrintsLeavesAsPyTorchSpellsThem) {
  struct Case {
    Kind kind;
    const char* printed;
  };
  const Case cases[] = {
      {Kind::Tensor, "Tensor"},
      {Kind::Int, "int"},
      {Kind::SymInt, "SymInt"},
      {Kind::Float, "float"},
      {Kind::Bool, "bool"},
      {Kind::Str, "str"},
      {Kind::Scalar, "Scalar"},
      {Kind::ScalarType, "ScalarType"},
      {Kind::Layout, "Layout"},
      {Kind::MemoryFormat, "MemoryFormat"},
      {Kind::Device, "Device"},
      {Kind::Generator, "Generator"},
      {Kind::Dimname, "Dimname"},
      {Kind::Storage, "Storage"},
      {Kind::Stream, "Stream"},
      {Kind::QScheme, "QScheme"},
      {Kind::Complex, "complex"},
      {Kind::Number, "number"},
      {Kind::Any, "Any"},
      {Kind::AnyEnum, "AnyEnumType"},
      {Kind::AnyClass, "AnyClassType"},
      {Kind::None, "NoneType"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(leaf(c.kind)->toString(), c.printed);
    EXPECT_TRUE(leaf(c.kind)->isLeaf());
    EXPECT_EQ(detail::leafKindFromSpelling(c.printed), c.kind);
  }
  EXPECT_EQ(detail::leafKindFromSpelling("None"), Kind::None);
  EXPECT_EQ(detail::leafKindFromSpelling("t"), std::nullopt);
  EXPECT_EQ(detail::leafKindFromSpelling("Int"), std::nullopt);
}

TEST(SchemaType, PrintsContainers) {
  SchemaTypePtr tensor = leaf(Kind::Tensor);
  SchemaTypePtr t = SchemaType::var("t");
  struct Case {
    SchemaTypePtr type;
    const char* printed;
  };
  const Case cases[] = {
      {optionalOf(tensor), "Tensor?"},
      {listOf(leaf(Kind::Int)), "int[]"},
      {listOf(optionalOf(tensor)), "Tensor?[]"},
      {optionalOf(listOf(optionalOf(tensor))), "Tensor?[]?"},
      {listOf(leaf(Kind::SymInt)), "SymInt[]"},
      {listOf(listOf(leaf(Kind::Str))), "str[][]"},
      {SchemaType::dict(leaf(Kind::Str), t), "Dict(str, t)"},
      {SchemaType::tuple({leaf(Kind::Str), t}), "(str, t)"},
      {listOf(SchemaType::tuple({leaf(Kind::Str), t})), "(str, t)[]"},
      {SchemaType::tuple({}), "()"},
      {SchemaType::future(t), "Future(t)"},
      {SchemaType::rref(t), "RRef(t)"},
      {SchemaType::var("tVal"), "tVal"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.printed);
    EXPECT_EQ(c.type->toString(), c.printed);
    std::ostringstream out;
    out << *c.type;
    EXPECT_EQ(out.str(), c.printed);
  }
}

TEST(SchemaType, CommonTypesAreShared) {
  EXPECT_EQ(leaf(Kind::Tensor).get(), leaf(Kind::Tensor).get());
  EXPECT_EQ(optionalOf(leaf(Kind::Tensor)).get(),
            optionalOf(leaf(Kind::Tensor)).get());
  EXPECT_EQ(listOf(leaf(Kind::Int)).get(), listOf(leaf(Kind::Int)).get());
  EXPECT_EQ(listOf(optionalOf(leaf(Kind::Tensor))).get(),
            listOf(optionalOf(leaf(Kind::Tensor))).get());
  EXPECT_EQ(optionalOf(listOf(leaf(Kind::SymInt))).get(),
            optionalOf(listOf(leaf(Kind::SymInt))).get());
}

TEST(SchemaType, Predicates) {
  SchemaTypePtr tensor = leaf(Kind::Tensor);
  struct Case {
    SchemaTypePtr type;
    bool is_tensor, is_tensor_list, is_optional_tensor, is_optional_tensor_list,
        contains_tensor;
  };
  const Case cases[] = {
      {tensor, true, false, false, false, true},
      {listOf(tensor), false, true, false, false, true},
      {optionalOf(tensor), false, false, true, false, true},
      {listOf(optionalOf(tensor)), false, false, false, true, true},
      {optionalOf(listOf(tensor)), false, false, false, false, true},
      {listOf(listOf(tensor)), false, false, false, false, true},
      {SchemaType::dict(leaf(Kind::Str), listOf(tensor)), false, false, false,
       false, true},
      {SchemaType::tuple({leaf(Kind::Int), tensor}), false, false, false, false,
       true},
      {leaf(Kind::Int), false, false, false, false, false},
      {listOf(leaf(Kind::Int)), false, false, false, false, false},
      {SchemaType::var("t"), false, false, false, false, false},
      {leaf(Kind::Any), false, false, false, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type->toString());
    EXPECT_EQ(c.type->isTensor(), c.is_tensor);
    EXPECT_EQ(c.type->isTensorList(), c.is_tensor_list);
    EXPECT_EQ(c.type->isOptionalTensor(), c.is_optional_tensor);
    EXPECT_EQ(c.type->isOptionalTensorList(), c.is_optional_tensor_list);
    EXPECT_EQ(c.type->containsTensor(), c.contains_tensor);
  }
}

TEST(SchemaType, StructuralEquality) {
  SchemaTypePtr a = SchemaType::dict(leaf(Kind::Str), SchemaType::var("t"));
  SchemaTypePtr b = SchemaType::dict(leaf(Kind::Str), SchemaType::var("t"));
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *SchemaType::dict(leaf(Kind::Str), SchemaType::var("t1")));
  EXPECT_NE(*a, *SchemaType::dict(leaf(Kind::Int), SchemaType::var("t")));
  EXPECT_NE(*leaf(Kind::Int), *leaf(Kind::SymInt));
  EXPECT_NE(*listOf(leaf(Kind::Tensor)),
            *listOf(optionalOf(leaf(Kind::Tensor))));
  EXPECT_NE(*SchemaType::tuple({leaf(Kind::Int)}),
            *SchemaType::tuple({leaf(Kind::Int), leaf(Kind::Int)}));
  EXPECT_NE(*SchemaType::future(leaf(Kind::Int)),
            *SchemaType::rref(leaf(Kind::Int)));
}

TEST(SchemaType, Accessors) {
  SchemaTypePtr d = SchemaType::dict(leaf(Kind::Str), leaf(Kind::Tensor));
  EXPECT_EQ(d->kind(), Kind::Dict);
  EXPECT_EQ(d->keyType()->kind(), Kind::Str);
  EXPECT_EQ(d->valueType()->kind(), Kind::Tensor);
  EXPECT_EQ(d->containedTypes().size(), 2u);
  EXPECT_EQ(listOf(leaf(Kind::Int))->elementType()->kind(), Kind::Int);
  EXPECT_EQ(SchemaType::var("tVal")->varName(), "tVal");
  EXPECT_FALSE(SchemaType::var("t")->isLeaf());
  EXPECT_STREQ(toString(Kind::SymInt), "SymInt");
  EXPECT_STREQ(toString(Kind::Optional), "Optional");
}

TEST(SchemaType, MisuseIsAnInternalError) {
  auto kindOf = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::InvalidArgument;
  };
  EXPECT_EQ(kindOf([] { SchemaType::get(Kind::List); }), ErrorKind::Internal);
  EXPECT_EQ(kindOf([] { leaf(Kind::Int)->elementType(); }),
            ErrorKind::Internal);
  EXPECT_EQ(kindOf([] { leaf(Kind::Int)->varName(); }), ErrorKind::Internal);
  EXPECT_EQ(kindOf([] { SchemaType::list(nullptr); }), ErrorKind::Internal);
}

}  // namespace
}  // namespace turnout
