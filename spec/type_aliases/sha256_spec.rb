# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Sha256' do
  it { is_expected.to allow_values('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '0' * 64) }

  it do
    is_expected.not_to allow_values('E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855', 'a' * 63,
                                    'a' * 65, 'g' * 64, "#{'a' * 64}  clone-army", "#{'a' * 64}\n", '', :undef)
  end
end
