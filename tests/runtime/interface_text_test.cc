// `NAME --interface` prints the interface by hand (the executables have no
// TextFormat); ninfd reads it back with TextFormat. The two must agree on
// every field of FunctionInterface, including fields added after the
// printer was written: the message below is filled through reflection, so a
// new field the printer forgets makes this test fail.
#include "stubs/runtime/interface_text.h"

#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>
#include <string>

namespace {

namespace pb = google::protobuf;

// Gives every field of `msg` a value other than its default (recursively,
// two elements per repeated field), with `seed` varying the values.
void FillEveryField(pb::Message *msg, int seed, int depth = 0) {
  const pb::Descriptor *d = msg->GetDescriptor();
  const pb::Reflection *r = msg->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor *f = d->field(i);
    const int copies = f->is_repeated() ? 2 : 1;
    for (int k = 0; k < copies; ++k) {
      const int v = seed + 7 * i + k + 1;
      switch (f->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_STRING: {
          // Quotes, backslashes, control bytes and UTF-8 exercise escaping.
          std::string s = "f" + std::to_string(v) + " \"q\" \\ \t\n\x01 \xc3\xa9";
          f->is_repeated() ? r->AddString(msg, f, s) : r->SetString(msg, f, s);
          break;
        }
        case pb::FieldDescriptor::CPPTYPE_BOOL:
          f->is_repeated() ? r->AddBool(msg, f, true) : r->SetBool(msg, f, true);
          break;
        case pb::FieldDescriptor::CPPTYPE_INT64:
          f->is_repeated() ? r->AddInt64(msg, f, -v * 1000003LL)
                           : r->SetInt64(msg, f, -v * 1000003LL);
          break;
        case pb::FieldDescriptor::CPPTYPE_INT32:
          f->is_repeated() ? r->AddInt32(msg, f, -v) : r->SetInt32(msg, f, -v);
          break;
        case pb::FieldDescriptor::CPPTYPE_UINT32:
          f->is_repeated() ? r->AddUInt32(msg, f, v) : r->SetUInt32(msg, f, v);
          break;
        case pb::FieldDescriptor::CPPTYPE_UINT64:
          f->is_repeated() ? r->AddUInt64(msg, f, v) : r->SetUInt64(msg, f, v);
          break;
        case pb::FieldDescriptor::CPPTYPE_ENUM: {
          // The last value: never the default, and named.
          const pb::EnumDescriptor *e = f->enum_type();
          const int value = e->value(e->value_count() - 1)->number();
          f->is_repeated() ? r->AddEnumValue(msg, f, value) : r->SetEnumValue(msg, f, value);
          break;
        }
        case pb::FieldDescriptor::CPPTYPE_MESSAGE:
          if (depth < 4)
            FillEveryField(f->is_repeated() ? r->AddMessage(msg, f) : r->MutableMessage(msg, f),
                           v * 11, depth + 1);
          break;
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        case pb::FieldDescriptor::CPPTYPE_FLOAT:
          FAIL("FunctionInterface has a field kind the printer does not know: " << f->full_name());
      }
    }
  }
}

std::string TextFormat(const pb::Message &msg) {
  std::string out;
  REQUIRE(pb::TextFormat::PrintToString(msg, &out));
  return out;
}

}  // namespace

TEST_CASE("--interface prints every field as TextFormat does", "[runtime]") {
  ninf::wire::FunctionInterface iface;
  FillEveryField(&iface, 0);
  REQUIRE(iface.no_reuse());
  REQUIRE(iface.params_size() == 2);
  CHECK(ninf::stub::InterfaceText(iface) == TextFormat(iface));

  // And reads back as the same message.
  ninf::wire::FunctionInterface back;
  REQUIRE(pb::TextFormat::ParseFromString(ninf::stub::InterfaceText(iface), &back));
  CHECK(back.SerializeAsString() == iface.SerializeAsString());
}

TEST_CASE("--interface leaves out defaults as TextFormat does", "[runtime]") {
  ninf::wire::FunctionInterface iface;
  CHECK(ninf::stub::InterfaceText(iface) == TextFormat(iface));
  iface.set_name("null");
  iface.add_params()->set_name("n");  // a param with every other field default
  iface.mutable_calc_order();         // set but empty: printed as `calc_order {}`
  CHECK(ninf::stub::InterfaceText(iface) == TextFormat(iface));
}
